"""``paper/make_paper.py`` split by concern.

``settings`` (paths, budgets), ``budgets`` and ``results`` (the results file, typed: read once
into :class:`~zrpaper.results.Results`, which every other module takes, and written once),
``claims`` (the paper's side of each comparison), ``compute``, ``race`` and ``table5``
(exploring), ``merge`` (replacing some committers' part), ``cells``, ``matrix``, ``sections``,
``differences`` and ``render`` (the markdown), ``figures`` (the PNGs).
"""
