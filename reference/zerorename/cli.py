"""The ``zerorename`` command line.

Production subcommands (``uploads``, ``success``) use only the reference package.  The research
subcommands (``demo``, ``check``, ``table``, ``trace``) import the model lazily, inside their
handlers, so that a production install never loads test machinery.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
import time
from collections.abc import Sequence
from typing import Any

DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> float:
    """``90s``, ``15m``, ``12h``, ``7d`` → seconds."""
    match = DURATION.match(text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"bad duration {text!r}: use e.g. 90s, 15m, 12h, 7d")
    return float(match.group(1)) * UNITS[match.group(2)]


def _store_for(url: str, args: argparse.Namespace) -> Any:
    from zerorename.stores import LocalStore, S3Store, make_s3_client

    if url.startswith("file://"):
        return LocalStore()
    # no --checksums: make_s3_client's own default, as the Spark writer's ``checksums`` option
    # has, so that the CLI reads a destination the way the job that wrote it did
    kwargs: dict[str, Any] = {"checksums": args.checksums} if args.checksums else {}
    client = make_s3_client(endpoint_url=args.endpoint_url, region=args.region, **kwargs)
    return S3Store(client)


def _add_endpoint_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--endpoint-url", help="S3 endpoint (default: boto3's configuration)")
    parser.add_argument("--region", help="region (default: boto3's configuration)")
    parser.add_argument("--checksums", choices=["default", "when_required"], default=None,
                        help="request checksums: when_required (the default, as for the Spark "
                             "writer: only where the API requires them, which non-AWS "
                             "endpoints accept) or default (boto3's, fine on AWS)")


#: S3 introduced multipart upload on 2010-11-10 (AWS News Blog, "Amazon S3 - Multipart
#: Upload"): an upload the store says was initiated before the next day cannot be real.
#: moto reports exactly that day (2010-11-10T20:48:33Z) for every upload.
MULTIPART_UPLOAD_LAUNCH = 1289433600.0  # 2010-11-11T00:00:00Z
#: how far in the future an Initiated time may be before it is a clock error, not skew
CLOCK_SKEW_SECONDS = 900.0


def implausible_initiated(initiated: float, now: float) -> bool:
    """A store's ``Initiated`` time that cannot be when the upload started: before S3 had
    multipart uploads, or in the future by more than clock skew."""
    return initiated < MULTIPART_UPLOAD_LAUNCH or initiated > now + CLOCK_SKEW_SECONDS


def _age_warning(uploads: Sequence[Any], now: float) -> str | None:
    """A warning when the ages the store's ``Initiated`` times give cannot be right (moto
    reports 2010 for every upload), so that nobody aborts by ``--older-than`` on them."""
    bad = [u for u in uploads if u.age_source == "store" and u.age is not None
           and implausible_initiated(now - u.age, now)]
    if not bad:
        return None
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(now - bad[0].age))
    return (f"warning: the store reports {len(bad)} upload(s) initiated at implausible times "
            f"(e.g. {when}: before S3 had multipart uploads, or in the future); their ages "
            "are not real (moto reports 2010-11-10 for every upload). Do not trust "
            "--older-than on this store; --job ages uploads by the job's own records.")


def cmd_uploads(args: argparse.Namespace) -> int:
    from zerorename.committers.cleanup import abort_uploads, list_uploads
    from zerorename.context import valid_job_id
    from zerorename.errors import CommitError
    from zerorename.urls import parse_url

    if args.job is not None and not valid_job_id(args.job):
        # it names the job's record directories: never let it point anywhere else
        raise CommitError(f"--job {args.job}", "not a job ID: 1-128 characters of "
                                               "[A-Za-z0-9._-], starting with a letter or digit")
    parse_url(args.dest)  # a bad URL: one clear line (BadURLError), before any client is made
    store = _store_for(args.dest, args)
    now = time.time()
    found = list_uploads(store, args.dest, job_id=args.job, older_than=args.older_than, now=now)
    for upload in found:
        age = "?" if upload.age is None else f"{upload.age / 3600:.1f}h"
        print(f"{upload.url}\t{upload.upload_id}\tage={age}\tsource={upload.age_source}")
    print(f"{len(found)} upload(s) under {args.dest}", file=sys.stderr)
    warning = _age_warning(found, now)
    if warning:
        print(f"zerorename: {warning}", file=sys.stderr)
    if args.action == "abort":
        if args.dry_run:
            print(f"dry run: would abort {len(found)} upload(s)", file=sys.stderr)
        else:
            aborted = abort_uploads(store, found)
            print(f"aborted {aborted} upload(s)", file=sys.stderr)
    return 0


def cmd_success(args: argparse.Namespace) -> int:
    import zerorename as zr

    store = _store_for(args.dest, args)
    summary = zr.read_success(store, args.dest)
    if args.json:
        print(json.dumps(summary.to_json(), indent=2))
        return 0
    print(summary.describe())
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    if not args.model_only:
        try:
            from zerorename import mainjob
        except ImportError as error:
            print(f"[demo] the Spark main job is unavailable ({error}); running the model demo",
                  file=sys.stderr)
        else:
            return int(mainjob.main(args.rest))
    from zerorename_model import demo

    return int(demo.main())


def cmd_trace(args: argparse.Namespace) -> int:
    from zerorename_model.trace import format_trace, read_trace, replay

    if args.action == "show":
        print(format_trace(read_trace(args.file), verbose=args.verbose))
        return 0
    outcome = replay(args.file)
    print(format_trace(outcome.result.trace, verbose=args.verbose))
    verdict = "same final state" if outcome.same else "DIFFERENT final state"
    print(f"replay: {verdict} (recorded {outcome.recorded_digest[:12]}, "
          f"replayed {outcome.replayed_digest[:12]})")
    return 0 if outcome.same else 1


def _progress() -> Any:
    """A progress callback: one stderr line per step, with the elapsed time."""
    started = time.monotonic()

    def progress(line: str) -> None:
        print(f"[{time.monotonic() - started:6.1f}s] {line}", file=sys.stderr, flush=True)

    return progress


def cmd_check(args: argparse.Namespace) -> int:
    progress = _progress()
    if args.target == "model":
        from zerorename_model.verdicts import format_matrix, matrix, save

        cells = matrix(args.committer, args.store, args.property, quick=args.quick,
                       traces=args.traces, progress=progress)
    else:
        from zerorename_bridge.verdicts import format_matrix, reference_matrix, save

        cells = reference_matrix(args.committer, args.store, args.property, quick=args.quick,
                                 traces=args.traces, progress=progress)
    print(format_matrix(cells))
    if args.json:
        save(cells, args.json)
        print(f"wrote {args.json}", file=sys.stderr)
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    from zerorename_model import tablev

    return int(tablev.main(json_path=args.json, traces=args.traces, committers=args.committer,
                           progress=_progress()))


def check_names_epilog() -> str:
    """The names ``check`` accepts, read from the model and the bridge when ``check --help``
    is formatted (not when the parser is built: production commands never load the model)."""
    try:
        from zerorename_model.properties import PROPERTIES
        from zerorename_model.protocols import load_all
        from zerorename_model.stores import PROFILES
    except ImportError as error:
        return f"(the model is not installed, so no names can be listed: {error})"
    from zerorename_model.verdicts import MATRIX_COMMITTERS

    committers = sorted(load_all())
    variants = [c for c in committers if "+" in c]
    entries = [
        ("model committers (--target model)", [c for c in committers if "+" not in c]),
        ("  default (no --committer)", [c for c in MATRIX_COMMITTERS if c in committers]),
        ("  variants (name+variant: a known bug reintroduced, or deliberately broken; only "
         "when named)", variants),
        ("store profiles (default: all)", list(PROFILES)),
        ("properties (default: all)", list(PROPERTIES)),
    ]
    try:
        from zerorename_bridge.verdicts import REFERENCE_COMMITTERS, REFERENCE_STORES
    except ImportError:
        pass
    else:
        entries[3:3] = [("reference committers (--target reference)", list(REFERENCE_COMMITTERS)),
                        ("  their stores (moto: on an in-process moto S3)",
                         list(REFERENCE_STORES))]
    lines = []
    for title, names in entries:
        indent = " " * (len(title) - len(title.lstrip()) + 4)
        lines += textwrap.wrap(f"{title}: {', '.join(names)}", 88, subsequent_indent=indent,
                               break_on_hyphens=False)
    return "\n".join(lines)


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose epilog can be computed when help is shown (``epilog_from``),
    so that listing the model's names costs nothing unless someone asks for help."""

    def __init__(self, *args: Any, epilog_from: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.epilog_from = epilog_from

    def format_help(self) -> str:
        if self.epilog_from is not None and self.epilog is None:
            self.epilog = str(self.epilog_from())
        return super().format_help()


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="zerorename",
        description="Rename-free output committers for object stores, and the model that "
                    "checks them.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=Parser)

    demo = sub.add_parser("demo", help="run the main job: PySpark writes through every "
                          "committer on an embedded S3, then the quick model matrix")
    demo.add_argument("--model-only", action="store_true",
                      help="only the model's eventual-consistency demonstration")
    demo.add_argument("--job-help", action="store_true",
                      help="list the main job's own options (any other option is passed on)")
    demo.set_defaults(func=cmd_demo)

    check = sub.add_parser("check", help="derive the verdict matrix by exploration",
                           formatter_class=argparse.RawDescriptionHelpFormatter,
                           epilog_from=check_names_epilog)
    check.add_argument("--target", choices=["model", "reference"], default="model")
    check.add_argument("--committer", action="append", help="repeatable; default: all")
    check.add_argument("--store", action="append", help="repeatable; default: all profiles")
    check.add_argument("--property", action="append", help="repeatable; default: all")
    check.add_argument("--quick", action="store_true", help="small budgets (CI: < 3 minutes)")
    check.add_argument("--json", help="write the cells as JSON here")
    check.add_argument("--traces", help="write each violation's shrunk trace here")
    check.set_defaults(func=cmd_check)

    table = sub.add_parser("table", help="compute the paper's Table V by probes, and compare")
    table.add_argument("--committer", action="append",
                       help="repeatable; default: every registered committer of the table")
    table.add_argument("--json", help="write the table as JSON here")
    table.add_argument("--traces", help="write witness traces here")
    table.set_defaults(func=cmd_table)

    trace = sub.add_parser("trace", help="show or replay a model trace (JSON lines)")
    trace.add_argument("action", choices=["show", "replay"])
    trace.add_argument("file")
    trace.add_argument("--verbose", "-v", action="store_true", help="show every step")
    trace.set_defaults(func=cmd_trace)

    uploads = sub.add_parser("uploads", help="list or abort incomplete multipart uploads "
                             "under a destination (scoped as a directory)")
    uploads.add_argument("action", choices=["list", "abort"])
    uploads.add_argument("dest", help="s3://bucket/prefix")
    uploads.add_argument("--older-than", type=parse_duration, metavar="DURATION")
    uploads.add_argument("--job", help="only uploads of this job ID")
    uploads.add_argument("--dry-run", action="store_true")
    _add_endpoint_options(uploads)
    uploads.set_defaults(func=cmd_uploads)

    success = sub.add_parser("success", help="summarise a destination's _SUCCESS file")
    success.add_argument("dest")
    success.add_argument("--json", action="store_true", help="print the raw JSON")
    _add_endpoint_options(success)
    success.set_defaults(func=cmd_success)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if args.command == "demo":
        args.rest = [*extra, "--help"] if args.job_help else extra
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130
    except (ValueError, OSError) as error:  # bad input: one clear line, not a traceback
        print(f"zerorename: {error}", file=sys.stderr)
        return 2
    except Exception as error:
        from zerorename.errors import CommitError

        if isinstance(error, CommitError):
            print(f"zerorename: {error}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
