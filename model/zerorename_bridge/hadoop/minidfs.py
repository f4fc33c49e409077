"""Hadoop's HDFS committers on a real HDFS and on the imitation, side by side
(``python -m zerorename_bridge.hadoop.minidfs``; issue 45, item 2).

Each schedule (a shipped hdfs witness, or a random schedule of the matrix's reproduced scopes)
runs once in the model and is replayed twice: on a MiniDFSCluster (``HadoopSession(fs=
"minidfs")``: HDFS 3.5.0 itself, one NameNode and one DataNode in the driver's JVM) and on the
imitation (``HdfsLikeFileSystem``).  Each replay is compared with the model as
:mod:`.differential` does; the two replays are also compared with each other, call by call:
every filesystem call each Hadoop actor stopped at (kind and path), how each committer call
ended (returned, with its value, or failed, with the exception's class), and what each left
(:class:`~.translate.Comparison`'s file differences).  An imitation that differs from HDFS
anywhere shows here even where both agree with the model.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zerorename_bridge.hadoop.differential import (
    conformance_seed,
    random_runs,
    replay_hint,
    witness_paths,
    witness_run,
)
from zerorename_bridge.hadoop.recording import MarkedResult
from zerorename_bridge.hadoop.session import Answer, HadoopSession, State
from zerorename_bridge.hadoop.translate import COMMITTERS, Comparison, Translator

RESULTS = Path(__file__).resolve().parents[3] / "bench" / "results"
#: where the figures go (rows per committer; the command in ``header``)
FIGURES = RESULTS / "hadoop_conformance_hdfs.json"

Step = tuple[str, ...]


class RecordingSession(HadoopSession):
    """A session that keeps every answer an actor gave, below the scenario root: the calls
    Hadoop's committers made on this filesystem, in order, and how each committer call
    ended (a failure by its exception's class: messages name paths their own way)."""

    def __init__(self, *, fs: str, classpath: Sequence[str] = ()) -> None:
        super().__init__(fs=fs, classpath=classpath)
        self.log: list[Step] = []
        self.workdir = ""

    def _answer(self, words: list[str]) -> Answer:
        answer = super()._answer(words)
        self.log.append(self.step_of(answer))
        return answer

    def step_of(self, answer: Answer) -> Step:
        if answer.state is State.PENDING and answer.call is not None:
            call = answer.call
            return ("pending", call.kind, self._rel(call.path), self._rel(call.other))
        if answer.state is State.FAILED:
            return ("failed", answer.value.split(":", 1)[0])
        return ("done", answer.value)

    def _rel(self, path: str) -> str:
        return path.replace(self.workdir, "", 1) if self.workdir else path

    def take(self) -> list[Step]:
        taken, self.log = self.log, []
        return taken


@dataclass
class Side:
    """One filesystem's replays."""

    session: RecordingSession
    translator: Translator

    @classmethod
    def start(cls, fs: str, classpath: Sequence[str] = ()) -> Side:
        session = RecordingSession(fs=fs, classpath=classpath)
        translator = Translator(session)
        session.workdir = str(translator.workdir)
        return cls(session, translator)

    def run(self, marked: MarkedResult, name: str,
            options: dict[str, str] | None = None) -> tuple[Comparison, list[Step]]:
        self.session.take()
        comparison = self.translator.compare(marked, name, options)
        return comparison, self.session.take()

    def close(self) -> None:
        self.translator.close()
        self.session.close()


@dataclass(frozen=True)
class Outcome:
    """One schedule on both filesystems."""

    name: str
    minidfs: Comparison
    imitation: Comparison
    same: bool  # the imitation did exactly what HDFS did
    first_difference: str = ""


def difference(hdfs: tuple[Comparison, list[Step]],
               imitation: tuple[Comparison, list[Step]]) -> str:
    """Where the imitation's replay first departs from HDFS's ("" when nowhere)."""
    (real, real_log), (fake, fake_log) = hdfs, imitation
    for index, (mine, theirs) in enumerate(zip(real_log, fake_log, strict=False)):
        if mine != theirs:
            return f"answer {index}: minidfs {mine}, imitation {theirs}"
    if len(real_log) != len(fake_log):
        return f"answers: minidfs {len(real_log)}, imitation {len(fake_log)}"
    for mine_call, their_call in zip(real.calls, fake.calls, strict=False):
        if (mine_call.hadoop, mine_call.hadoop_value.split(":", 1)[0]) != (
                their_call.hadoop, their_call.hadoop_value.split(":", 1)[0]):
            return f"call: minidfs {mine_call}, imitation {their_call}"
    if [str(f) for f in real.files] != [str(f) for f in fake.files]:
        return (f"files: minidfs {[str(f) for f in real.files]}, imitation "
                f"{[str(f) for f in fake.files]}")
    return ""


def both(hdfs: Side, imitation: Side, marked: MarkedResult, name: str,
         imitation_options: dict[str, str] | None = None) -> Outcome:
    """The schedule on both; ``imitation_options``: Hadoop settings of the imitation's side
    only (a test's deliberately wrong imitation: ``fs.hlfs.impl``)."""
    real = hdfs.run(marked, name)
    fake = imitation.run(marked, name, imitation_options)
    first = difference(real, fake)
    return Outcome(name, real[0], fake[0], not first, first)


@dataclass
class Row:
    """What one committer's schedules did, for the figures."""

    committer: str
    witnesses: int = 0
    witnesses_minidfs_agree: int = 0
    witnesses_imitation_agree: int = 0
    witnesses_35_minidfs_agree: int = 0
    witnesses_35_imitation_agree: int = 0
    witnesses_same: int = 0
    witnesses_pinned: int = 0  # differ as recorded, agree with Hadoop 3.5.0's option
    random: int = 0
    random_minidfs_agree: int = 0
    random_imitation_agree: int = 0
    random_same: int = 0
    seconds_minidfs: float = 0.0
    seconds_imitation: float = 0.0
    differences: list[str] = field(default_factory=list)

    def add_random(self, outcome: Outcome) -> None:
        self.random += 1
        self.random_minidfs_agree += outcome.minidfs.agrees
        self.random_imitation_agree += outcome.imitation.agrees
        self.random_same += outcome.same
        self._note(outcome)

    def _note(self, outcome: Outcome) -> None:
        if not outcome.same:
            self.differences.append(f"{outcome.name}: imitation differs from HDFS: "
                                    f"{outcome.first_difference}")
        for side, comparison in (("minidfs", outcome.minidfs),
                                 ("imitation", outcome.imitation)):
            if not comparison.agrees:
                self.differences.append(f"[{side}] {comparison.describe()}")


def committer_of(witness: Path) -> str:
    """A witness's committer (the VIII.C race's run ``v1``)."""
    name = witness.name.split(".")[0]
    return "v1" if name == "race" else name


def run_witnesses(row: Row, hdfs: Side, imitation: Side, paths: Iterable[Path]) -> None:
    for path in paths:
        recorded = both(hdfs, imitation, witness_run(path), path.name)
        as_35 = both(hdfs, imitation, witness_run(path, hadoop_35=True), path.name + " (3.5.0)")
        row.witnesses += 1
        row.witnesses_minidfs_agree += recorded.minidfs.agrees
        row.witnesses_imitation_agree += recorded.imitation.agrees
        row.witnesses_35_minidfs_agree += as_35.minidfs.agrees
        row.witnesses_35_imitation_agree += as_35.imitation.agrees
        row.witnesses_same += recorded.same and as_35.same
        row.witnesses_pinned += (not recorded.minidfs.agrees) and as_35.minidfs.agrees
        row._note(recorded)
        row._note(as_35)


def run_committer(committer: str, count: int, seed: int, hdfs: Side, imitation: Side,
                  progress: Path | None = None, *, start: int = 0,
                  witnesses: bool = True) -> Row:
    """The committer's witnesses (unless not ``witnesses``) and its random schedules
    ``start`` to ``start + count`` of ``seed``."""
    row = Row(committer)
    if witnesses:
        run_witnesses(row, hdfs, imitation,
                      [p for p in witness_paths() if committer_of(p) == committer])
    for name, marked in random_runs(committer, count, seed, start=start):
        started = time.monotonic()
        real = hdfs.run(marked, name)
        middle = time.monotonic()
        fake = imitation.run(marked, name)
        row.seconds_minidfs += middle - started
        row.seconds_imitation += time.monotonic() - middle
        first = difference(real, fake)
        row.add_random(Outcome(name, real[0], fake[0], not first, first))
        if progress is not None and row.random % 50 == 0:
            progress.write_text(json.dumps(row_json(row, seed), indent=1) + "\n")
    if progress is not None:
        progress.write_text(json.dumps(row_json(row, seed), indent=1) + "\n")
    return row


def row_json(row: Row, seed: int) -> dict[str, object]:
    return {
        "committer": row.committer,
        "witnesses": {
            "replayed": row.witnesses,
            "agreeing_minidfs": row.witnesses_minidfs_agree,
            "agreeing_imitation": row.witnesses_imitation_agree,
            "agreeing_minidfs_hadoop_35_option": row.witnesses_35_minidfs_agree,
            "agreeing_imitation_hadoop_35_option": row.witnesses_35_imitation_agree,
            "pinned": row.witnesses_pinned,
            "imitation_same_as_minidfs": row.witnesses_same,
        },
        "random": {
            "run": row.random,
            "agreeing_minidfs": row.random_minidfs_agree,
            "agreeing_imitation": row.random_imitation_agree,
            "imitation_same_as_minidfs": row.random_same,
            "seconds_minidfs": round(row.seconds_minidfs, 1),
            "seconds_imitation": round(row.seconds_imitation, 1),
        },
        "seed": seed,
        "differences": row.differences[:40],
    }


#: the imitation (``HdfsLikeFileSystem``): what :func:`fs_rules` probes unless told otherwise
IMITATION_CLASS = "zerorename.conformance.HdfsLikeFileSystem"


def fs_rules(session: HadoopSession,
             imitations: Sequence[str] = (IMITATION_CLASS,)) -> dict[str, list[str]]:
    """The filesystem rules the committers rely on (``FsRules`` in jvm/research: a rename
    onto a file, into a directory, below a file; deletes, listings, creates, mkdirs), each
    probed on the ``minidfs`` session's HDFS and on each imitation class, from the same
    small tree: probe -> [HDFS's answer, each imitation's], an answer being the call's value
    or exception class and the tree after it."""
    rules = {}
    for line in session.command("rules", *imitations)[1:]:
        name, *answers = line.split("\x1f")
        rules[name] = answers
    return rules


def merge(parts: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per committer: the counts of its parts (of one seed) added up."""
    rows: dict[str, dict[str, Any]] = {}
    for part in parts:
        row = rows.get(part["committer"])
        if row is None:
            rows[part["committer"]] = json.loads(json.dumps(part))
            continue
        if row["seed"] != part["seed"]:
            raise ValueError(f"{part['committer']}: parts of seeds {row['seed']} and "
                             f"{part['seed']}")
        for group in ("witnesses", "random"):
            for key, value in part[group].items():
                row[group][key] = round(row[group][key] + value, 1)
        row["differences"] += part["differences"]
    return [rows[c] for c in COMMITTERS if c in rows]


def versions() -> dict[str, str]:
    import pyspark

    return {"hadoop": "3.5.0 (PySpark's hadoop-client jars; hadoop-client-minicluster 3.5.0)",
            "pyspark": pyspark.__version__, "python": platform.python_version()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000,
                        help="random schedules per committer")
    parser.add_argument("--seed", type=int, default=None,
                        help="the random schedules' seed (default: a fresh one, printed)")
    parser.add_argument("--start", type=int, default=0,
                        help="the first random schedule's index (a run split into parts)")
    parser.add_argument("--no-witnesses", action="store_true",
                        help="random schedules only (a part of a split run)")
    parser.add_argument("--committers", nargs="+", default=list(COMMITTERS),
                        choices=COMMITTERS)
    parser.add_argument("--part", type=Path,
                        help="write this run's rows here (JSON), updated as it goes")
    parser.add_argument("--merge", type=Path, nargs="+",
                        help="merge parts (of one seed) into --out instead of running")
    parser.add_argument("--out", type=Path, default=None, help=f"the figures (e.g. {FIGURES})")
    parser.add_argument("--command", default="", help="the command(s) named in the header")
    parser.add_argument("--run", default="run",
                        help="--merge: the name of this run in --out's runs (others kept)")
    parser.add_argument("--note", default="", help="--merge: a note kept beside the rows")
    args = parser.parse_args(argv)
    if args.merge:
        parts = [json.loads(p.read_text()) for p in args.merge]
        rows = merge([r for part in parts for r in (part if isinstance(part, list) else [part])])
        assert args.out is not None, "--merge needs --out"
        out = json.loads(args.out.read_text()) if args.out.is_file() else {}
        date = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        out.setdefault("header", "written by python -m zerorename_bridge.hadoop.minidfs "
                       "--merge; each run's command is in its entry")
        out["versions"] = versions()
        out.setdefault("runs", {})[args.run] = {
            "date": date, "command": args.command, "note": args.note, "rows": rows}
        args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
        return 0
    seed = conformance_seed() if args.seed is None else args.seed
    print(replay_hint(seed), flush=True)
    hdfs = Side.start("minidfs")
    imitation = Side.start("imitation")
    rows = []
    try:
        for committer in args.committers:
            progress = None
            if args.part is not None:
                progress = args.part.with_name(f"{args.part.stem}.{committer}.json")
            row = run_committer(committer, args.count, seed, hdfs, imitation, progress,
                                start=args.start, witnesses=not args.no_witnesses)
            rows.append(row_json(row, seed))
            print(json.dumps(rows[-1], indent=1), flush=True)
    finally:
        hdfs.close()
        imitation.close()
    if args.part is not None:
        args.part.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
