"""Reading a :class:`~zerorename.stores.probe_report.ConformanceReport`: which committers it
makes safe on the store, and why (:func:`advise`), and the table ``zerorename probe`` prints
(:func:`render`).

The advice follows from what each committer relies on (``docs/committers.md``): ``fenced``
decides every commit with one If-None-Match PUT, so racing writers must get exactly one winner;
``magic`` and the staging committers read back the records tasks wrote and find uploads to
abort by listing; ``manifest`` and ``v1`` publish by rename; ``v2`` publishes task output before
the job commits, which no store can make safe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from zerorename.store import StoreCapabilities
from zerorename.stores.probe_report import (
    Answer,
    ConformanceReport,
    RaceOp,
    RaceVerdict,
)

__all__ = ["BACKSTOPS", "RELIES_ON", "Advice", "RaceMeaning", "advise", "race_meanings", "render"]

#: The conditional requests whose racing answer a committer's safety rests on: the ones it
#: sends.  ``fenced`` decides task and job commits with If-None-Match PUTs of its records; no
#: committer sends If-Match, and only ``fenced`` completes with If-None-Match, as a backstop
#: (:data:`BACKSTOPS`), so the If-Match and complete races decide nothing for them
#: (``tests/reference/test_probe_reliance.py`` runs every committer and checks that these and
#: the backstops are exactly the conditions each one sends).
RELIES_ON: dict[str, tuple[RaceOp, ...]] = {
    "fenced": (RaceOp.PUT_IF_NONE_MATCH,),
    "magic": (), "directory": (), "partitioned": (), "manifest": (), "v1": (), "v2": (),
}

#: Conditional requests a committer sends whose racing answer its verdict does not rest on.
#: ``fenced`` completes with If-None-Match as a backstop: its job commit checks its keys
#: before the commit point, and the condition only keeps an object another writer creates
#: between that check and the complete (where a store ignores it, Ceph RGW, the store checks
#: with a HEAD first, and such an object could be replaced; task and job commits are decided
#: by the PUTs either way).
BACKSTOPS: dict[str, tuple[RaceOp, ...]] = {"fenced": (RaceOp.COMPLETE_IF_NONE_MATCH,)}


@dataclass(frozen=True)
class Advice:
    """One committer's verdict on the probed store, the measurement it rests on, and the
    racing conditional requests that verdict depends on (``relies_on``)."""

    committer: str
    safe: bool
    why: str
    relies_on: tuple[RaceOp, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"committer": self.committer, "safe": self.safe, "why": self.why,
                "relies_on": [op.name for op in self.relies_on]}


@dataclass(frozen=True)
class RaceMeaning:
    """What one race's verdict means for the committers: who relies on it, and so what."""

    op: RaceOp
    verdict: RaceVerdict
    relied_on_by: tuple[str, ...]
    meaning: str

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op.name, "verdict": self.verdict.value,
                "relied_on_by": list(self.relied_on_by), "meaning": self.meaning}


def race_meanings(report: ConformanceReport) -> tuple[RaceMeaning, ...]:
    """For each race the report holds: which committers rely on it (:data:`RELIES_ON`), and
    what its verdict means for them."""
    out = []
    for r in report.races:
        users = tuple(c for c, ops in RELIES_ON.items() if r.op in ops)
        if not users:
            meaning = "no committer sends it: changes no committer's verdict"
        elif r.verdict is RaceVerdict.EXCLUSIVE and not r.lost_writes:
            meaning = f"{', '.join(users)} can rely on it: one writer won every round"
        else:
            meaning = (f"{', '.join(users)} must not run here: {r.max_winners} racing writers "
                       "won one key, so two task attempts could both commit")
        out.append(RaceMeaning(r.op, r.verdict, users, meaning))
    return tuple(out)


def advise(report: ConformanceReport, capabilities: StoreCapabilities) -> tuple[Advice, ...]:
    c = report.consistency
    reads = c.read_after_write.answer is Answer.YES and c.read_after_overwrite.answer is Answer.YES
    lists = c.list_after_write.answer is Answer.YES and c.list_after_delete.answer is Answer.YES
    uploads = report.uploads_listed.answer is Answer.YES
    base_ok = reads and lists and uploads
    base_why = ("records read back and listed at once, every upload listed" if base_ok else
                "needs read- and list-after-write and every upload listed: "
                + _missing(reads, lists, uploads))
    rename_why = ("atomic rename" if capabilities.rename and capabilities.atomic_dir_rename
                  else "publishes by rename, which this store does not have")
    rename_ok = capabilities.rename and capabilities.atomic_dir_rename and reads and lists
    advice = (
        _fenced(report, base_ok, base_why),
        Advice("magic", base_ok, base_why),
        Advice("directory", base_ok, base_why),
        Advice("partitioned", base_ok, base_why),
        Advice("manifest", rename_ok, rename_why),
        Advice("v1", rename_ok, rename_why),
        Advice("v2", False, "publishes each task's output before the job commits "
                            "(a failed job leaves partial output) on every store"),
    )
    return tuple(Advice(a.committer, a.safe, a.why, RELIES_ON[a.committer]) for a in advice)


def _missing(reads: bool, lists: bool, uploads: bool) -> str:
    gaps = [name for name, ok in (("read-after-write", reads), ("list consistency", lists),
                                  ("upload listing", uploads)) if not ok]
    return "missing " + ", ".join(gaps)


def _fenced(report: ConformanceReport, base_ok: bool, base_why: str) -> Advice:
    if report.sequential.put_if_none_match is not Answer.YES:
        return Advice("fenced", False, "a second If-None-Match: * PUT over an existing "
                      "object was not refused: the store ignores the header")
    put = report.race(RaceOp.PUT_IF_NONE_MATCH)
    if put is None:
        return Advice("fenced", False, "racing If-None-Match writers were not measured")
    if put.verdict is not RaceVerdict.EXCLUSIVE or put.lost_writes:
        return Advice("fenced", False, f"{put.max_winners} of {put.writers} racing "
                      f"If-None-Match writers succeeded on one key ({put.histogram()}): "
                      "two task attempts could both commit")
    if not base_ok:
        return Advice("fenced", False, base_why)
    return Advice("fenced", True, f"exactly one of {put.writers} racing If-None-Match "
                  f"writers won in each of {put.rounds} rounds")


def _yn(answer: Answer) -> str:
    return answer.value


def render(report: ConformanceReport, capabilities: StoreCapabilities) -> str:
    """The human-readable report: measurements, then the committers' verdicts."""
    s, c = report.sequential, report.consistency
    rows: list[tuple[str, str]] = [
        ("PUT If-None-Match * over an existing key refused", _yn(s.put_if_none_match)),
        ("PUT If-Match <other etag> refused", _yn(s.put_if_match_stale)),
        ("PUT If-Match <current etag> accepted", _yn(s.put_if_match_current)),
        ("complete If-None-Match * over an existing key refused", _yn(s.complete_if_none_match)),
        ("complete If-Match <other etag> refused", _yn(s.complete_if_match_stale)),
        ("complete If-Match <current etag> accepted", _yn(s.complete_if_match_current)),
    ]
    out = [f"zerorename probe: store {report.store}, under {report.area}",
           f"  {report.requests} requests, {report.seconds:.1f} s, cleaned up: "
           f"{'yes' if report.cleaned_up else 'NO'}", "", "one writer at a time"]
    out += [f"  {name:<58} {value}" for name, value in rows]
    if report.races:
        r0 = report.races[0]
        out += ["", f"racing writers ({r0.writers} writers, {r0.rounds} rounds, a barrier "
                    "before the requests)"]
        for r in report.races:
            extra = f", lost writes {r.lost_writes}" if r.lost_writes else ""
            extra += f", {r.error_count} errors" if r.error_count else ""
            out.append(f"  {r.op.value:<42} {r.verdict.value:<16} {r.histogram()}{extra}")
        out += ["", "what each race means for the committers"]
        out += [f"  {m.op.value:<42} {m.meaning}" for m in race_meanings(report)]
    out += ["", "consistency"]
    out += [f"  {name:<58} {trials}" for name, trials in (
        ("read after write", c.read_after_write), ("read after overwrite", c.read_after_overwrite),
        ("list after write", c.list_after_write), ("list after delete", c.list_after_delete))]
    page = (f", asking {report.uploads_page_size} per page" if report.uploads_page_size
            else "")
    if page and report.s3 and report.s3.get("list_uploads_paginated") is False:
        page += " (the server ignored it: one page)"
    out += ["", "limits",
            f"  {'multipart uploads listed back' + page:<58} {report.uploads_listed}",
            f"  {'smallest non-final part accepted':<58} {_size(report)}"]
    out += [f"  {f'PUT with a {n}-byte key accepted':<58} {a.value}"
            for n, a in report.key_lengths]
    if report.s3:
        out += ["", "S3 capability probe (one writer)"]
        out += [f"  {name:<58} {'yes' if value else 'no'}" for name, value in report.s3.items()]
    out += ["", "committers on this store"]
    out += [f"  {a.committer:<12} {'safe' if a.safe else 'NOT safe':<9} {a.why}"
            for a in advise(report, capabilities)]
    if report.notes:
        out += ["", "notes"] + [f"  {n}" for n in report.notes]
    return "\n".join(out)


def _size(report: ConformanceReport) -> str:
    if not report.part_sizes_tried:
        return "not measured"
    if report.min_part_size is None:
        return f"none of {', '.join(_bytes(n) for n in report.part_sizes_tried)}"
    return _bytes(report.min_part_size)


def _bytes(n: int) -> str:
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"
