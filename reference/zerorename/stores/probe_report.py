"""What ``zerorename probe`` measured on one store: typed results, turned into JSON only at the
edge (:meth:`ConformanceReport.to_json`).

Every field is an observation made through the store protocol, the way a committer sees the
store (its retry loop and landed checks included); nothing here is taken from a server's
documentation.  :mod:`zerorename.stores.probe` fills these in; :mod:`~zerorename.stores.
probe_text` prints them and says which committers they make safe.
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = [
    "Answer",
    "ConformanceReport",
    "ConsistencyChecks",
    "RaceOp",
    "RaceResult",
    "RaceVerdict",
    "SequentialChecks",
    "Trials",
]


class Answer(enum.Enum):
    """One yes/no measurement; ``UNKNOWN`` when the step itself failed (the note says why)."""

    YES = "yes"
    NO = "no"
    UNKNOWN = "unknown"

    @staticmethod
    def of(value: bool) -> Answer:
        return Answer.YES if value else Answer.NO


class RaceOp(enum.Enum):
    """The conditional request N writers race on one key."""

    PUT_IF_NONE_MATCH = "PutObject If-None-Match: *"
    PUT_IF_MATCH = "PutObject If-Match: <etag>"
    COMPLETE_IF_NONE_MATCH = "CompleteMultipartUpload If-None-Match: *"
    COMPLETE_IF_MATCH = "CompleteMultipartUpload If-Match: <etag>"


class RaceVerdict(enum.Enum):
    """What the rounds of one race showed.

    ``EXCLUSIVE``: exactly one winner in every round.  ``SEVERAL_WINNERS``: some round let two
    or more writers succeed (a check-then-act server, or one that ignores the header).
    ``NO_WINNER``: some round had no winner at all (every writer failed: errors, not 412s).
    """

    EXCLUSIVE = "exclusive"
    SEVERAL_WINNERS = "several winners"
    NO_WINNER = "no winner"


@dataclass(frozen=True)
class RaceResult:
    """``writers`` threads, released together by a barrier, each sending ``op`` with its own
    body, for ``rounds`` rounds on a fresh key each; ``winners[i]`` writers succeeded in round
    i.  ``lost_writes``: rounds whose final object held no winner's bytes.  ``errors``: answers
    that were neither success nor 412 (first few, with their count in ``error_count``)."""

    op: RaceOp
    writers: int
    rounds: int
    winners: tuple[int, ...]
    lost_writes: int = 0
    error_count: int = 0
    errors: tuple[str, ...] = ()
    seconds: float = 0.0

    @property
    def verdict(self) -> RaceVerdict:
        if any(w > 1 for w in self.winners):
            return RaceVerdict.SEVERAL_WINNERS
        if any(w == 0 for w in self.winners):
            return RaceVerdict.NO_WINNER
        return RaceVerdict.EXCLUSIVE

    @property
    def max_winners(self) -> int:
        return max(self.winners, default=0)

    def histogram(self) -> str:
        """``1 winner x5, 2 winners x1``: how many rounds had each number of winners."""
        counts = Counter(self.winners)
        return ", ".join(f"{n} winner{'s' if n != 1 else ''} x{c}"
                         for n, c in sorted(counts.items()))


@dataclass(frozen=True)
class Trials:
    """A check repeated ``total`` times, ``passed`` of which held."""

    passed: int
    total: int

    @property
    def answer(self) -> Answer:
        if self.total == 0:
            return Answer.UNKNOWN
        return Answer.of(self.passed == self.total)

    def __str__(self) -> str:
        return f"{self.answer.value} ({self.passed}/{self.total})"


@dataclass(frozen=True)
class SequentialChecks:
    """One writer at a time: what today's capability probe asks, through the store protocol.

    ``put_if_none_match``: a second PUT with If-None-Match ``*`` over an existing key is refused.
    ``put_if_match_stale``: a PUT whose If-Match names another ETag is refused.
    ``put_if_match_current``: a PUT whose If-Match names the current ETag succeeds.
    ``complete_if_none_match``: CompleteMultipartUpload with If-None-Match ``*`` over an
    existing key is refused.
    ``complete_if_match_stale`` / ``complete_if_match_current``: CompleteMultipartUpload with
    If-Match naming another ETag is refused / naming the current ETag succeeds.
    """

    put_if_none_match: Answer
    put_if_match_stale: Answer
    put_if_match_current: Answer
    complete_if_none_match: Answer
    complete_if_match_stale: Answer
    complete_if_match_current: Answer


@dataclass(frozen=True)
class ConsistencyChecks:
    """Read and list right after a write or delete, each repeated a few times."""

    read_after_write: Trials
    read_after_overwrite: Trials
    list_after_write: Trials
    list_after_delete: Trials


@dataclass(frozen=True)
class ConformanceReport:
    """Everything one ``zerorename probe`` run measured on ``store`` under ``area``.

    ``uploads_listed``: of the uploads the probe created, how many the store's
    list-multipart-uploads returned (``uploads_page_size`` per page when the store pages).
    ``min_part_size``: the smallest tried size a non-final part may have (``None``: none of
    ``part_sizes_tried`` was accepted).  ``key_lengths``: each tried key length in UTF-8
    bytes and whether a PUT there succeeded.  ``s3``: the S3 capability probe's own fields
    (spelling of If-Match, marker semantics…), present for S3 endpoints.
    """

    store: str
    area: str
    sequential: SequentialChecks
    races: tuple[RaceResult, ...]
    consistency: ConsistencyChecks
    uploads_listed: Trials
    uploads_page_size: int | None
    min_part_size: int | None
    part_sizes_tried: tuple[int, ...]
    key_lengths: tuple[tuple[int, Answer], ...]
    cleaned_up: bool
    requests: int
    seconds: float
    s3: dict[str, bool] | None = None
    notes: tuple[str, ...] = field(default=())

    def race(self, op: RaceOp) -> RaceResult | None:
        return next((r for r in self.races if r.op is op), None)

    @property
    def max_key_bytes(self) -> int | None:
        """The longest tried key length that was accepted."""
        accepted = [n for n, a in self.key_lengths if a is Answer.YES]
        return max(accepted) if accepted else None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values (enums by value, verdicts spelt out), for ``--json``."""
        data: dict[str, Any] = _plain(asdict(self))
        for race, out in zip(self.races, data["races"], strict=True):
            out["verdict"] = race.verdict.value
            out["op_name"] = race.op.name
        return data


def _plain(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
