"""Checking: the properties a run must have (:mod:`.properties`, reading :mod:`.run_facts`) and
the searches that check them over a scope's schedules (:mod:`.explore`, exhaustive with
reductions; :mod:`.sampling`, hypothesis).  Built on :mod:`..engine` and :mod:`..systems`."""
