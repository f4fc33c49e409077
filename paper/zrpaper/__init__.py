"""``paper/make_paper.py`` split by concern.

``settings`` (paths, budgets, the results file), ``claims`` (the paper's side of each
comparison), ``compute``, ``race`` and ``table5`` (exploring), ``merge`` (replacing some
committers' part), ``cells``, ``matrix``, ``sections``, ``differences`` and ``render`` (the
markdown), ``figures`` (the PNGs).
"""
