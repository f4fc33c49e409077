"""The model against S3A's committers (hadoop-aws 3.5.0) on moto: the shipped s3 witnesses and
random schedules per committer, with a fresh seed unless ``--seed`` (printed).

    .venv/bin/python bench/hadoop_conformance_s3a.py --count 1000

Writes bench/results/hadoop_conformance_s3a.{md,json}.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from zerorename_bridge.hadoop.differential import (
    Tally,
    conformance_seed,
    replay_hint,
    run_random,
    witness_run,
)
from zerorename_bridge.hadoop.s3a_translate import S3A_COMMITTERS, s3a_translator, s3a_witness_paths

RESULTS = Path(__file__).resolve().parent / "results"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    seed = conformance_seed() if args.seed is None else args.seed
    print(replay_hint(seed), flush=True)
    report: dict[str, object] = {"seed": seed, "count": args.count, "committers": {}}
    lines = [f"# S3A 3.5.0 on moto against the model ({replay_hint(seed)})", ""]
    with s3a_translator() as translator:
        for committer in S3A_COMMITTERS:
            witnesses = Tally()
            for path in s3a_witness_paths():
                if path.name.startswith(committer + "."):
                    witnesses.add(translator.compare(witness_run(path, hadoop_35=True),
                                                     path.name))
            randoms = run_random(translator, committer, args.count, seed, store="s3")
            report["committers"][committer] = {  # type: ignore[index]
                "witnesses": witnesses.runs, "witnesses_agreeing": witnesses.agreed,
                "random": randoms.runs, "random_agreeing": randoms.agreed,
                "differences": [c.describe() for c in witnesses.differences + randoms.differences]}
            lines.append(f"- {committer}: witnesses {witnesses.agreed}/{witnesses.runs} agree, "
                         f"random {randoms.agreed}/{randoms.runs} agree")
            for c in (witnesses.differences + randoms.differences)[:10]:
                lines += ["  " + line for line in c.describe().splitlines()]
            print(lines[-1], flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "hadoop_conformance_s3a.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (RESULTS / "hadoop_conformance_s3a.json").write_text(json.dumps(report, indent=1) + "\n",
                                                         encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
