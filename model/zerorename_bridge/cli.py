"""The research subcommands of ``zerorename``: ``demo``, ``check``, ``table``, ``trace``.

The ``zerorename`` command belongs to the production distribution, which knows nothing of the
model: it finds these commands through the entry-point group ``zerorename.commands``, where
this distribution registers each object below (``model/pyproject.toml``).  Each is a
:class:`zerorename.cli.Command`.  Loading this module imports no model code: every handler
imports what it needs when it runs, so ``zerorename uploads`` and ``zerorename --help`` stay
fast with this distribution installed.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from typing import Any

from zerorename.cli import CommandParser


def _progress() -> Callable[[str], None]:
    """A progress callback: one stderr line per step, with the elapsed time."""
    started = time.monotonic()

    def progress(line: str) -> None:
        print(f"[{time.monotonic() - started:6.1f}s] {line}", file=sys.stderr, flush=True)

    return progress


class DemoCommand:
    """``zerorename demo``: the main job (:mod:`zerorename_bridge.mainjob`), or the model's
    demonstration alone; options it does not know are the main job's."""

    summary = ("run the main job: PySpark writes through every committer on an embedded S3, "
               "then the quick model matrix")
    passes_unknown_options = True

    def configure(self, parser: CommandParser) -> None:
        parser.add_argument("--model-only", action="store_true",
                            help="only the model's eventual-consistency demonstration")
        parser.add_argument("--job-help", action="store_true",
                            help="list the main job's own options (any other option is "
                                 "passed on)")

    def run(self, args: argparse.Namespace, unknown: Sequence[str]) -> int:
        if not args.model_only:
            try:
                from zerorename_bridge import mainjob
            except ImportError as error:  # no pyspark: the model's part still runs
                print(f"[demo] the Spark main job is unavailable ({error}); running the "
                      "model demo", file=sys.stderr)
            else:
                rest = [*unknown, "--help"] if args.job_help else list(unknown)
                return int(mainjob.main(rest))
        from zerorename_model.present import demo

        return int(demo.main())


class TraceCommand:
    """``zerorename trace show|replay FILE``."""

    summary = "show or replay a model trace (JSON lines)"
    passes_unknown_options = False

    def configure(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["show", "replay"])
        parser.add_argument("file")
        parser.add_argument("--verbose", "-v", action="store_true", help="show every step")

    def run(self, args: argparse.Namespace, unknown: Sequence[str]) -> int:
        from zerorename_model.experiments.trace import format_trace, read_trace

        if args.action == "show":
            print(format_trace(read_trace(args.file), verbose=args.verbose))
            return 0
        from zerorename_bridge.plugins import replay_any

        # a reference committer's witness (its header says so) replays with that committer,
        # a committer from outside the tree with the class its header names
        outcome = replay_any(args.file)
        print(format_trace(outcome.result.trace, verbose=args.verbose))
        verdict = "same final state" if outcome.same else "DIFFERENT final state"
        print(f"replay: {verdict} (recorded {outcome.recorded_digest[:12]}, "
              f"replayed {outcome.replayed_digest[:12]})")
        return 0 if outcome.same else 1


def check_names_epilog() -> str:
    """The names ``check`` accepts, read from the model and the bridge when ``check --help``
    is formatted (not when the parser is built, so that other commands never load them)."""
    from zerorename_bridge.plugins import MODEL_GROUP, REFERENCE_GROUP, Target, registered
    from zerorename_bridge.verdicts import REFERENCE_COMMITTERS, REFERENCE_STORES
    from zerorename_model.check.properties import PROPERTIES
    from zerorename_model.engine.stores.profiles import PROFILES
    from zerorename_model.experiments.verdicts import MATRIX_COMMITTERS
    from zerorename_model.systems.protocols import load_all

    committers = sorted(load_all())
    variants = [c for c in committers if "+" in c]
    entries = [
        ("model committers (--target model)", [c for c in committers if "+" not in c]),
        ("  default (no --committer)", [c for c in MATRIX_COMMITTERS if c in committers]),
        ("  variants (name+variant: a known bug reintroduced, or deliberately broken; the "
         "Section XIV bugs are rows by default (--variants), any may be named)", variants),
        ("protocols (--protocol; default both)", ["hadoop", "spark", "both"]),
        ("reference committers (--target reference)", list(REFERENCE_COMMITTERS)),
        (f"  installed ({REFERENCE_GROUP} entry points)", sorted(registered(Target.REFERENCE))
         or ["none"]),
        (f"model committers installed ({MODEL_GROUP} entry points)",
         sorted(registered(Target.MODEL)) or ["none"]),
        ("any committer class (both targets)", ["module:Class"]),
        ("  their stores (moto: on an in-process moto S3)", list(REFERENCE_STORES)),
        ("store profiles (default: all)", list(PROFILES)),
        ("properties (default: all)", list(PROPERTIES)),
    ]
    lines = []
    for title, names in entries:
        indent = " " * (len(title) - len(title.lstrip()) + 4)
        lines += textwrap.wrap(f"{title}: {', '.join(names)}", 88, subsequent_indent=indent,
                               break_on_hyphens=False)
    return "\n".join(lines)


class CheckCommand:
    """``zerorename check``: the verdict matrix, of the model's committers or the reference's."""

    summary = "derive the verdict matrix by exploration"
    passes_unknown_options = False

    def configure(self, parser: CommandParser) -> None:
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
        parser.epilog_from = check_names_epilog
        parser.add_argument("--target", choices=["model", "reference", "hadoop"],
                            default="model",
                            help="hadoop: Hadoop's own committers (v1, v2, manifest on an "
                                 "HDFS-like filesystem; magic, directory, partitioned: S3A "
                                 "on moto; hadoop:<class>) under the model's schedules and "
                                 "faults, through the research JVM driver")
        parser.add_argument("--jar", action="append", metavar="PATH",
                            help="--target hadoop: a jar (or class folder) holding a "
                                 "hadoop:<class> committer; repeatable (also "
                                 "$ZERORENAME_HADOOP_CLASSPATH)")
        parser.add_argument("--fs", choices=["imitation", "minidfs"], default="imitation",
                            help="--target hadoop: the filesystem of v1, v2, manifest and "
                                 "hadoop:<class> on hdfs: the HDFS-like local filesystem, or "
                                 "a real HDFS (a MiniDFSCluster started in the JVM, ~15 s)")
        parser.add_argument("--committer", action="append",
                            help="repeatable; default: all built-in ones. A built-in name, an "
                                 "installed entry point's name, or module:Class of a "
                                 "committer class of yours (docs/research/"
                                 "committer-authors.md)")
        parser.add_argument("--store", action="append",
                            help="repeatable; default: all profiles")
        parser.add_argument("--property", action="append", help="repeatable; default: all")
        parser.add_argument("--protocol", choices=["hadoop", "spark", "both"], default="both",
                            help="the job-commit protocol(s) each cell is decided under: "
                                 "hadoop (commit_job(None) lists the store for committed "
                                 "tasks), spark (the driver passes the accepted attempts' "
                                 "messages); default both, side by side")
        parser.add_argument("--variants", action=argparse.BooleanOptionalAction, default=True,
                            help="the production bugs of Section XIV as rows: each variant "
                                 "beside its fixed committer (model target; those whose fixed "
                                 "committer and store are selected; default: shown)")
        parser.add_argument("--quick", action="store_true",
                            help="small budgets (CI): every cell is searched, few proved; "
                                 "violations come from the seeds and a short search. "
                                 "Without it (model target): 4,000 runs per scope, then a "
                                 "second pass of 50,000 runs per scope over every cell the "
                                 "first left holds*, then a third over those still holds* on a "
                                 "lagging store with at most 4 visibility events pending at "
                                 "once (holds†; tens of minutes on 2 cores)")
        parser.add_argument("--seeds", metavar="DIR",
                            help="model target: saved witness traces to try first in each "
                                 "scope (default: "
                                 "paper/results/traces of the source tree, when present). Each "
                                 "seed is replayed against the current code in the scope's "
                                 "scenario and counts only if the property checker flags that "
                                 "replay; a seed that no longer violates counts for nothing")
        parser.add_argument("--no-seeds", action="store_true",
                            help="decide every cell by exploration alone")
        parser.add_argument("--json", help="write the cells as JSON here")
        parser.add_argument("--traces", help="write each violation's shrunk trace here")
        store = parser.add_argument_group(
            "a store of yours (--target reference): the scenarios, with client-side faults, "
            "and zerorename probe, under a fresh zerorename-check-<uuid> area of an empty "
            "--prefix, removed afterwards")
        store.add_argument("--prefix", metavar="s3://BUCKET/PREFIX",
                           help="where the check may write: must hold nothing")
        store.add_argument("--endpoint-url", help="the S3 endpoint (MinIO, Ceph RGW...); "
                                                  "default: AWS")
        store.add_argument("--profile", help="the AWS profile whose credentials to use")
        store.add_argument("--region", help="the client's region (default: "
                                            "AWS_DEFAULT_REGION, else us-east-1)")
        store.add_argument("--no-probe", action="store_true",
                           help="skip zerorename probe of the store")

    def run(self, args: argparse.Namespace, unknown: Sequence[str]) -> int:
        from zerorename_model.experiments.matrix import matrix, save
        from zerorename_model.experiments.matrix_text import format_matrix
        from zerorename_model.experiments.scopes import PROTOCOLS
        from zerorename_model.experiments.seeds import default_directory

        progress = _progress()
        protocols = PROTOCOLS if args.protocol == "both" else (args.protocol,)
        from zerorename_bridge import plugins

        if args.target == "hadoop":
            from zerorename_bridge.hadoop.check import run_check

            cells = run_check(args.committer, args.store, args.property, quick=args.quick,
                              traces=args.traces, protocols=protocols, jars=args.jar,
                              progress=progress, fs=args.fs)
            print(format_matrix(cells))
            if args.json:
                save(cells, args.json)
                print(f"wrote {args.json}", file=sys.stderr)
            return 0
        target = plugins.Target(args.target)
        names = plugins.check_names(args.committer or [], target)  # a bad name fails here
        extra = [n for n in names if plugins.is_plugin(n, target)]
        if args.target == "model":
            found = default_directory()
            seeds = None if args.no_seeds else args.seeds or (str(found) if found else None)
            if seeds and not extra:
                progress(f"seeds: saved witness traces in {seeds} are tried first "
                         "(--no-seeds: exploration alone)")
            if extra:  # a committer class of the user's: resolved by name in each worker
                from zerorename_model.systems.protocols import load_all

                cells = matrix(names, args.store, args.property, quick=args.quick,
                               traces=args.traces, progress=progress, protocols=protocols,
                               variants=False, resolve=plugins.model_resolver,
                               known=[*load_all(), *extra])
            else:
                cells = matrix(args.committer, args.store, args.property, quick=args.quick,
                               traces=args.traces, progress=progress, protocols=protocols,
                               variants=args.variants, seeds=seeds)
        elif args.prefix or args.endpoint_url or args.profile:
            cells = self._on_user_store(args, names, protocols, progress)
        else:
            from zerorename_bridge.verdicts import reference_matrix

            cells = reference_matrix(args.committer, args.store, args.property,
                                     quick=args.quick, traces=args.traces, progress=progress,
                                     protocols=protocols, resolver=plugins.reference_resolver,
                                     extra=extra)
            for cell in cells:  # witnesses replay with the reference committer they name
                if cell.trace:
                    plugins.mark_reference(cell.trace)
        print(format_matrix(cells))
        if args.json:
            save(cells, args.json)
            print(f"wrote {args.json}", file=sys.stderr)
        return 0

    @staticmethod
    def _on_user_store(args: argparse.Namespace, names: list[str], protocols: Sequence[str],
                       progress: Callable[[str], None]) -> list[Any]:
        from zerorename_bridge.user_store import STORE_NAME, UserStore, user_matrix

        if not args.prefix:
            raise ValueError("--endpoint-url/--profile need --prefix s3://bucket/prefix: "
                             "the empty place the check may write")
        if args.store and args.store != [STORE_NAME]:
            raise ValueError(f"--store {' '.join(args.store)}: with --prefix the store is "
                             f"yours ({STORE_NAME}); run the model stores without --prefix")
        config = UserStore(args.prefix, args.endpoint_url, args.region, args.profile)
        return user_matrix(config, names, args.property, quick=args.quick,
                           traces=args.traces, protocols=protocols, progress=progress,
                           probe=not args.no_probe)


class TableCommand:
    """``zerorename table``: the paper's Table V computed by probes."""

    summary = "compute the paper's Table V by probes, and compare"
    passes_unknown_options = False

    def configure(self, parser: CommandParser) -> None:
        parser.add_argument("--committer", action="append",
                            help="repeatable; default: every registered committer of the table")
        parser.add_argument("--json", help="write the table as JSON here")
        parser.add_argument("--traces", help="write witness traces here")

    def run(self, args: argparse.Namespace, unknown: Sequence[str]) -> int:
        from zerorename_model.experiments import tablev

        return int(tablev.main(json_path=args.json, traces=args.traces,
                               committers=args.committer, progress=_progress()))


#: the entry points of ``zerorename.commands`` (model/pyproject.toml)
DEMO = DemoCommand()
CHECK = CheckCommand()
TABLE = TableCommand()
TRACE = TraceCommand()
