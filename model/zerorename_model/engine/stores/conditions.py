"""Conditional writes (If-None-Match, If-Match on PUT and on completing an upload), as an honest
store does them and as the faulty ones the profiles name do: a store that checks and then acts
with a gap between (``conditional_race``), and one that accepts the headers and ignores them
(``ignores_conditions``).  One place, so that PUT and a multipart completion fail and race alike.
"""

from __future__ import annotations

from zerorename_model.engine.errors import ModelStoreError, not_found, precondition_failed
from zerorename_model.engine.stores.state import StoreState


def check_conditions(state: StoreState, url: str, if_none_match: bool,
                     if_match: str | None) -> None:
    """Refuse a write whose condition does not hold of the truth (or that the store cannot make
    conditional at all); an unconditional write, or one a faulty store ignores, passes."""
    if not (if_none_match or if_match):
        return
    if not state.profile.conditional_put:
        raise ModelStoreError(url, "NotImplemented", 501,
                              f"{state.profile.name} has no conditional writes")
    if state.profile.ignores_conditions:
        return
    current = state.objects.get(url)  # conditions are checked against the truth
    if if_none_match and current is not None:
        raise precondition_failed(url, "If-None-Match: the key exists")
    if if_match is not None:
        if current is None:
            raise not_found(url)
        if current.etag != if_match.strip('"'):
            raise precondition_failed(url, "If-Match: the ETag changed")


def conditional_gap(state: StoreState, url: str, conditional: bool) -> None:
    """On a check-then-act store, the moment between a conditional write's check and its
    write, where the harness may run other requests (a racer's check among them)."""
    if conditional and state.profile.conditional_race and not state.profile.ignores_conditions:
        state.between_steps(f"put {url}")
