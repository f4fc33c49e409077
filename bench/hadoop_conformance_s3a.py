"""The model against S3A's committers (hadoop-aws 3.5.0) on moto: the shipped s3 witnesses and
random schedules per committer, with a fresh seed unless ``--seed`` (printed; replay with it).

    .venv/bin/python bench/hadoop_conformance_s3a.py --count 1000
    .venv/bin/python bench/hadoop_conformance_s3a.py --count 1000 --committer magic --seed 7

Each committer's row (replacing the row of the same committer and filesystem) goes into
bench/results/hadoop_conformance.json, and the S3A section of bench/results/hadoop_conformance.md
is written again from every S3A row there (the hdfs section is left as it is).  Several
processes (one a committer) may run at once: the read-modify-write of the results is locked.
"""

from __future__ import annotations

import argparse
import datetime
import fcntl
import json
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from zerorename_bridge.hadoop.differential import (
    Tally,
    conformance_seed,
    random_runs,
    replay_hint,
    witness_run,
)
from zerorename_bridge.hadoop.s3a_translate import (
    PINNED_WITNESSES,
    S3A_COMMITTERS,
    s3a_translator,
    s3a_witness_paths,
)
from zerorename_bridge.hadoop.translate import Comparison

RESULTS = Path(__file__).resolve().parent / "results"
JSON = RESULTS / "hadoop_conformance.json"
MARKDOWN = RESULTS / "hadoop_conformance.md"
FILESYSTEM = "s3a on moto"
BEGIN = "<!-- s3a section: written by bench/hadoop_conformance_s3a.py -->"
END = "<!-- end of the s3a section -->"


def hadoop_version() -> str:
    import pyspark

    jars = sorted((Path(pyspark.__file__).parent / "jars").glob("hadoop-client-api-*.jar"))
    return jars[0].stem.removeprefix("hadoop-client-api-") if jars else "?"


def _difference(comparison: Comparison) -> dict[str, Any]:
    first = comparison.call_differences[:1]
    return {"schedule": comparison.name,
            "first_call": f"{first[0].actor}.{first[0].method}" if first else "",
            "described": comparison.describe()}


def committer_row(committer: str, count: int, seed: int, every: int = 25,
                  resume: dict[str, Any] | None = None) -> dict[str, Any]:
    """The committer's row, saved (:func:`save`) after the witnesses and after every
    ``every`` random schedules, so that a run stopped early leaves what it did; ``resume``: a
    saved row of the same seed, whose witnesses and first random schedules are not run again
    (the run goes on with the next schedule)."""
    witnesses = Tally()
    randoms = Tally()
    pinned: list[str] = []
    before: list[dict[str, Any]] = []  # the resumed row's differences
    done = 0
    if resume is not None:
        witnesses.runs, witnesses.agreed = (resume["witnesses_replayed"],
                                            resume["witnesses_agreeing"])
        pinned = [""] * resume["witnesses_pinned_differences"]
        done = randoms.runs = resume["random_run"]
        randoms.agreed = resume["random_agreeing"]
        randoms.seconds = resume["seconds_per_schedule"] * done
        before = list(resume["differences"])

    def row() -> dict[str, Any]:
        return {
            "committer": committer, "filesystem": FILESYSTEM, "hadoop": hadoop_version(),
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "witnesses_replayed": witnesses.runs, "witnesses_agreeing": witnesses.agreed,
            "witnesses_pinned_differences": len(pinned),
            "witnesses_unexplained": witnesses.runs - witnesses.agreed - len(pinned),
            "random_seed": seed, "random_asked": count, "random_run": randoms.runs,
            "random_agreeing": randoms.agreed,
            "seconds_per_schedule": round(randoms.seconds / max(randoms.runs, 1), 3),
            "differences": before + [_difference(c)
                                     for c in witnesses.differences + randoms.differences],
        }

    with s3a_translator() as translator:
        for path in s3a_witness_paths():
            if resume is not None or not path.name.startswith(committer + "."):
                continue
            comparison = translator.compare(witness_run(path, hadoop_35=True), path.name)
            witnesses.add(comparison)
            pin = PINNED_WITNESSES.get(path.name)
            if pin is not None and not comparison.agrees and [
                    f"{c.actor}.{c.method}" for c in comparison.call_differences][:1] == [pin[0]]:
                pinned.append(path.name)
        save(row())
        started = time.monotonic() - randoms.seconds
        for index, (name, marked) in enumerate(random_runs(committer, count, seed, store="s3")):
            if index < done:
                continue
            try:
                randoms.add(translator.compare(marked, name))
            except RuntimeError as error:  # the driver gave up on a call: a difference too
                randoms.runs += 1
                before.append({"schedule": name, "first_call": "",
                               "described": f"{name}: HARNESS ERROR {error}"})
            randoms.seconds = time.monotonic() - started
            if (index + 1) % every == 0:
                save(row())
    final = row()
    save(final)
    return final


@contextmanager
def _locked() -> Iterator[None]:
    RESULTS.mkdir(exist_ok=True)
    with (Path(tempfile.gettempdir()) / "zerorename-hadoop-conformance.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def save(row: dict[str, Any]) -> None:
    with _locked():
        rows: list[dict[str, Any]] = (json.loads(JSON.read_text(encoding="utf-8"))["rows"]
                                      if JSON.exists() else [])
        rows = [r for r in rows if (r["committer"], r["filesystem"]) != (
            row["committer"], row["filesystem"])] + [row]
        order = {c: i for i, c in enumerate(S3A_COMMITTERS)}
        rows.sort(key=lambda r: (r["filesystem"], order.get(r["committer"], 99)))
        JSON.write_text(json.dumps({"rows": rows}, indent=1) + "\n", encoding="utf-8")
        write_markdown(rows)


def write_markdown(rows: list[dict[str, Any]]) -> None:
    mine = [r for r in rows if r["filesystem"] == FILESYSTEM]
    lines = [BEGIN, "", "## S3A (hadoop-aws 3.5.0) on moto: magic, directory, partitioned", "",
             "Written by `bench/hadoop_conformance_s3a.py --count N [--seed S]` (rows in "
             "`hadoop_conformance.json`); each difference is explained in "
             "docs/research/s3a-findings.md.", "",
             "| committer | witnesses agree / pinned / replayed | random agree / run (asked) | "
             "seed | s a schedule | Hadoop | date |", "|---|---|---|---|---|---|---|"]
    for r in mine:
        lines.append(f"| {r['committer']} | {r['witnesses_agreeing']} / "
                     f"{r['witnesses_pinned_differences']} / {r['witnesses_replayed']} | "
                     f"{r['random_agreeing']} / {r['random_run']} ({r['random_asked']}) | "
                     f"{r['random_seed']} | "
                     f"{r['seconds_per_schedule']} | {r['hadoop']} | {r['date']} |")
    lines += ["", END]
    text = MARKDOWN.read_text(encoding="utf-8") if MARKDOWN.exists() else ""
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + "\n".join(lines) + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"
    MARKDOWN.write_text(text, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000, help="random schedules a committer")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--committer", action="append", choices=S3A_COMMITTERS,
                        help="only these (repeatable; default: all three)")
    parser.add_argument("--resume", action="store_true",
                        help="go on from the saved row of each committer (same --seed)")
    args = parser.parse_args()
    seed = conformance_seed() if args.seed is None else args.seed
    print(replay_hint(seed), flush=True)
    saved = json.loads(JSON.read_text(encoding="utf-8"))["rows"] if JSON.exists() else []
    for committer in args.committer or S3A_COMMITTERS:
        resume = next((r for r in saved if args.resume and r["committer"] == committer
                       and r["filesystem"] == FILESYSTEM and r["random_seed"] == seed), None)
        row = committer_row(committer, args.count, seed, resume=resume)
        print(f"{committer}: witnesses {row['witnesses_agreeing']}/{row['witnesses_replayed']} "
              f"agree ({row['witnesses_pinned_differences']} pinned), random "
              f"{row['random_agreeing']}/{row['random_run']} agree, "
              f"{row['seconds_per_schedule']} s a schedule", flush=True)
        for difference in row["differences"][:20]:
            print(difference["described"], flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
