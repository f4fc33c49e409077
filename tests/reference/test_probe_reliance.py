"""What ``zerorename probe`` says each committer relies on (``probe_text.RELIES_ON``) is what it
sends: every committer runs whole jobs on a store that records each conditional request, and the
conditions seen must be exactly the races its verdict is said to rest on, plus the backstops it
is said to send (``probe_text.BACKSTOPS``: ``fenced``'s If-None-Match complete).  A committer
that started sending another condition, or a table that forgot ``fenced``'s PUT, fails here."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from zerorename.store import Store
from zerorename.stores import LocalStore
from zerorename.stores.probe_report import RaceOp
from zerorename.stores.probe_text import BACKSTOPS, RELIES_ON

from .conftest_helpers import options, run_job


class ConditionsSeen:
    """Delegates to ``inner``; records the race each conditional PUT or complete would be."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.name = inner.name
        self.seen: set[RaceOp] = set()

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    def put(self, url: str, data: bytes, *, if_none_match: bool = False,
            if_match: str | None = None) -> str:
        if if_none_match:
            self.seen.add(RaceOp.PUT_IF_NONE_MATCH)
        if if_match is not None:
            self.seen.add(RaceOp.PUT_IF_MATCH)
        return self.inner.put(url, data, if_none_match=if_none_match, if_match=if_match)

    def complete_multipart(self, url: str, upload_id: str, parts: Sequence[tuple[int, str]], *,
                           if_none_match: bool = False, if_match: str | None = None) -> str:
        if if_none_match:
            self.seen.add(RaceOp.COMPLETE_IF_NONE_MATCH)
        if if_match is not None:
            self.seen.add(RaceOp.COMPLETE_IF_MATCH)
        return self.inner.complete_multipart(url, upload_id, parts, if_none_match=if_none_match,
                                             if_match=if_match)


@pytest.mark.parametrize("committer", sorted(RELIES_ON))
@pytest.mark.parametrize("protocol", ["spark", "hadoop"])
def test_a_committer_relies_on_exactly_the_conditions_it_sends(committer: str, protocol: str,
                                                               tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    store = ConditionsSeen(LocalStore(root=tmp_path / "uploads"))
    dest = f"file://{tmp_path}/data/out"
    files = {0: {"a.txt": b"a" * 700}, 1: {"b/c.txt": b"c\n"}}
    run_job(committer, store, dest, files, protocol=protocol,
            opts=options())
    # a second job over the first: overwrite/replace paths send their own requests (fenced has
    # none, and refuses a key holding another job's object: its second job writes a new name)
    again = "a2.txt" if committer == "fenced" else "a.txt"
    run_job(committer, store, dest, {0: {again: b"new\n"}}, protocol=protocol,
            opts=options(**{"fs.s3a.committer.staging.conflict-mode": "replace"}))
    assert store.seen == set(RELIES_ON[committer]) | set(BACKSTOPS.get(committer, ())), \
        committer

