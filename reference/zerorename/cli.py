"""The ``zerorename`` command line.

The production subcommands (``uploads``, ``records``, ``success``, ``probe``) are defined here
and use only this package.  Other distributions add subcommands through the entry-point group
:data:`COMMAND_GROUP`, each entry a :class:`Command`; zerorename-research registers the
research commands (``demo``, ``check``, ``table``, ``trace``) there.  This module never
imports the research packages: it knows those four names only to say, when one is asked for
and the research distribution is not installed, what to install (one line, exit status 2).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

from zerorename._version import __version__

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


def _check_destination(dest: str, deleting: str | None) -> None:
    """Refuse what the committers refuse, before any client is made: a bad URL, a path with
    ``.``, ``..`` or empty elements, and — for ``deleting`` (a command that aborts or
    deletes) — a bucket root (``UnownableDestinationError``, one clear line)."""
    from zerorename.committers.destinations import check_destination_shape, check_may_delete_at
    from zerorename.urls import parse_url

    parse_url(dest)
    check_destination_shape(dest)
    if deleting is not None:
        check_may_delete_at(dest, deleting)


def cmd_uploads(args: argparse.Namespace) -> int:
    from zerorename.committers.cleanup import list_uploads
    from zerorename.context import valid_job_id
    from zerorename.errors import CommitError

    if args.job is not None and not valid_job_id(args.job):
        # it names the job's record directories: never let it point anywhere else
        raise CommitError(f"--job {args.job}", "not a job ID: 1-128 characters of "
                                               "[A-Za-z0-9._-], starting with a letter or digit")
    _check_destination(args.dest, "uploads abort" if args.action == "abort" else None)
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
        _abort(store, args, found)
    return 0


def _abort(store: Any, args: argparse.Namespace, found: Sequence[Any]) -> None:
    """Abort ``found`` — without ``--job``, only uploads no job in flight may own — and, with
    ``--job``, remove the job's records once its uploads are gone."""
    from zerorename.committers.cleanup import abort_uploads
    from zerorename.committers.janitor import delete_job_records, job_records, sort_by_activity

    targets = list(found)
    if args.job is None and not args.include_active:
        split = sort_by_activity(store, args.dest, found)
        targets = split.free
        if split.held:
            print(f"kept {len(split.held)} upload(s) a job in flight may own (a job root "
                  f"above, in or inside {args.dest}); to abort a crashed job's uploads name it "
                  "with --job ID, or pass --include-active", file=sys.stderr)
    records = job_records(store, args.dest, args.job) if args.job is not None else []
    if args.dry_run:
        for upload in targets:
            print(f"dry run: would abort {upload.url}\t{upload.upload_id}", file=sys.stderr)
        kept = len(found) - len(targets)
        print(f"dry run: would abort {len(targets)} of the {len(found)} upload(s) listed"
              + (f" and keep {kept}" if kept else ""), file=sys.stderr)
        if records:
            print(f"dry run: would remove {len(records)} record(s) of job {args.job}",
                  file=sys.stderr)
        return
    aborted = abort_uploads(store, targets)
    print(f"aborted {aborted} upload(s)", file=sys.stderr)
    if records:
        removed = delete_job_records(store, records)
        print(f"removed {removed} record(s) of job {args.job}", file=sys.stderr)


def cmd_records(args: argparse.Namespace) -> int:
    """``zerorename records list|expire``: finished fenced jobs' commit records and their ages;
    ``expire`` deletes those older than ``--older-than`` (default: the retention)."""
    from zerorename.committers.destinations import check_destination_shape
    from zerorename.committers.records import delete_expired, find_expired

    check_destination_shape(args.dest)  # a bad URL: one clear line, before any client
    store = _store_for(args.dest, args)
    older = 0.0 if args.action == "list" else args.older_than
    found = find_expired(store, args.dest, older_than=older, now=time.time())
    for record in found:
        print(f"{record.url}\tjob={record.job_id}\tage={record.age / 3600:.1f}h")
    if args.action == "list":
        print(f"{len(found)} finished job record(s) under {args.dest}", file=sys.stderr)
    elif args.dry_run:
        print(f"dry run: would remove {len(found)} expired record(s)", file=sys.stderr)
    else:
        print(f"removed {delete_expired(store, found)} expired record(s)", file=sys.stderr)
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


def cmd_probe(args: argparse.Namespace) -> int:
    """Measure the store at ``args.dest`` (in its hidden area), print the report and which
    committers are safe there; ``--json F`` also writes it as JSON (``-``: standard output)."""
    from zerorename.stores.probe import ProbeSettings, run_probe
    from zerorename.stores.probe_text import advise, race_meanings, render
    from zerorename.urls import parse_url

    parse_url(args.dest)  # a bad URL: one clear line (BadURLError), before any client is made
    if args.race < 2 or args.rounds < 1:
        raise ValueError("--race needs at least 2 writers and --rounds at least 1")
    store, extras = _probe_store_for(args.dest, args)
    report = run_probe(store, args.dest, ProbeSettings(racers=args.race, rounds=args.rounds),
                       extras=extras)
    capabilities = store.capabilities()
    if args.json != "-":
        print(render(report, capabilities))
    if args.json:
        data = {"report": report.to_json(),
                "committers": [a.to_json() for a in advise(report, capabilities)],
                "races_for_committers": [m.to_json() for m in race_meanings(report)]}
        text = json.dumps(data, indent=2)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w", encoding="utf-8") as out:
                out.write(text + "\n")
    return 0


def _probe_store_for(url: str, args: argparse.Namespace) -> tuple[Any, Any]:
    """The store to probe, and its store-specific extra measurements (S3's capability probe)."""
    from zerorename.stores import LocalStore, make_s3_client
    from zerorename.stores.probe_s3 import capability_extras, probing_store

    if url.startswith("file://"):
        return LocalStore(), None
    kwargs: dict[str, Any] = {"checksums": args.checksums} if args.checksums else {}
    store = probing_store(make_s3_client(endpoint_url=args.endpoint_url, region=args.region,
                                         **kwargs))
    return store, capability_extras(store)


class CommandParser(argparse.ArgumentParser):
    """An ArgumentParser whose epilog can be computed when help is shown (``epilog_from``),
    so that a long list of names (``check``'s) costs nothing unless someone asks for help."""

    def __init__(self, *args: Any, epilog_from: Callable[[], str] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.epilog_from = epilog_from

    def format_help(self) -> str:
        if self.epilog_from is not None and self.epilog is None:
            self.epilog = str(self.epilog_from())
        return super().format_help()


@runtime_checkable
class Command(Protocol):
    """A ``zerorename`` subcommand: built in, or registered by another distribution as an
    entry point of :data:`COMMAND_GROUP` (the entry's name is the subcommand's)."""

    @property
    def summary(self) -> str:
        """Its line in ``zerorename --help``."""
        ...

    @property
    def passes_unknown_options(self) -> bool:
        """Whether options the parser does not know go to :meth:`run` (the demo hands them
        to its job) rather than being an error."""
        ...

    def configure(self, parser: CommandParser) -> None:
        """Add its arguments to its own parser."""
        ...

    def run(self, args: argparse.Namespace, unknown: Sequence[str]) -> int:
        """Do it; return the exit status."""
        ...


#: The entry-point group of subcommands that other distributions add.
COMMAND_GROUP = "zerorename.commands"
#: The research commands, named here only to say where they come from when they are missing.
RESEARCH_COMMANDS = ("demo", "check", "table", "trace")
RESEARCH_DISTRIBUTION = "zerorename-research"
RESEARCH_INSTALL = "from a zerorename clone's top directory: pip install -e ./model"


@dataclass(frozen=True)
class BuiltinCommand:
    """A production subcommand: its arguments and a handler of this module."""

    summary: str
    add_arguments: Callable[[CommandParser], None]
    handler: Callable[[argparse.Namespace], int]
    passes_unknown_options: bool = False

    def configure(self, parser: CommandParser) -> None:
        self.add_arguments(parser)

    def run(self, args: argparse.Namespace, unknown: Sequence[str]) -> int:
        return self.handler(args)


@dataclass(frozen=True)
class UnavailableCommand:
    """A registered-elsewhere command that is not here (its distribution is not installed,
    or failed to load): it takes any arguments and answers with one line saying why."""

    name: str
    why: str
    passes_unknown_options: bool = True

    @property
    def summary(self) -> str:
        return f"(unavailable: needs {RESEARCH_DISTRIBUTION})"

    def configure(self, parser: CommandParser) -> None:
        return None

    def run(self, args: argparse.Namespace, unknown: Sequence[str]) -> int:
        print(f"zerorename: {self.why}", file=sys.stderr)
        return 2


def _uploads_arguments(parser: CommandParser) -> None:
    parser.add_argument("action", choices=["list", "abort"])
    parser.add_argument("dest", help="s3://bucket/prefix")
    parser.add_argument("--older-than", type=parse_duration, metavar="DURATION",
                        help="only uploads initiated longer ago than this (e.g. 90s, 15m, "
                             "12h, 7d; by the store's Initiated time, which some servers fake)")
    parser.add_argument("--job", help="only uploads of this job ID, as its own records name "
                                      "them (pending commits, upload intents, task records, "
                                      "a fenced job's commit record)")
    parser.add_argument("--include-active", action="store_true",
                        help="abort also uploads a job in flight may own (without --job, "
                             "those are kept and counted)")
    parser.add_argument("--dry-run", action="store_true")
    _add_endpoint_options(parser)


def _records_arguments(parser: CommandParser) -> None:
    from zerorename.committers.records import DEFAULT_RETENTION

    parser.add_argument("action", choices=["list", "expire"])
    parser.add_argument("dest", help="s3://bucket/prefix")
    parser.add_argument("--older-than", type=parse_duration, metavar="DURATION",
                        default=DEFAULT_RETENTION,
                        help="expire records older than this (default 1d, the retention)")
    parser.add_argument("--dry-run", action="store_true")
    _add_endpoint_options(parser)


def _run_records(args: argparse.Namespace) -> int:
    return cmd_records(args)


def _success_arguments(parser: CommandParser) -> None:
    parser.add_argument("dest")
    parser.add_argument("--json", action="store_true", help="print the raw JSON")
    _add_endpoint_options(parser)


def _probe_arguments(parser: CommandParser) -> None:
    from zerorename.stores.probe import DEFAULT_RACERS, DEFAULT_ROUNDS

    parser.add_argument("dest", help="s3://bucket/prefix or file:///path: the probe writes "
                                     "only under its hidden .zerorename-probe/ directory")
    parser.add_argument("--race", type=int, default=DEFAULT_RACERS, metavar="N",
                        help=f"racing writers per round (default {DEFAULT_RACERS})")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS, metavar="R",
                        help=f"rounds per race (default {DEFAULT_ROUNDS})")
    parser.add_argument("--json", metavar="F", help="also write the report as JSON to F "
                                                    "(- for standard output, instead of the "
                                                    "table)")
    _add_endpoint_options(parser)


def _run_probe(args: argparse.Namespace) -> int:
    return cmd_probe(args)


def _run_uploads(args: argparse.Namespace) -> int:
    return cmd_uploads(args)  # looked up when run, so that tests can replace _store_for


def _run_success(args: argparse.Namespace) -> int:
    return cmd_success(args)


BUILTIN_COMMANDS: dict[str, Command] = {
    "uploads": BuiltinCommand("list or abort incomplete multipart uploads under a "
                              "destination (scoped as a directory)", _uploads_arguments,
                              _run_uploads),
    "records": BuiltinCommand("list or expire the commit records finished fenced jobs keep "
                              "in a destination", _records_arguments, _run_records),
    "success": BuiltinCommand("summarise a destination's _SUCCESS file", _success_arguments,
                              _run_success),
    "probe": BuiltinCommand("measure what a store does for the committers (conditional writes "
                            "under racing writers, consistency, limits) and say which are "
                            "safe there", _probe_arguments, _run_probe),
}


def missing_research_command(name: str) -> UnavailableCommand:
    return UnavailableCommand(
        name, f"'{name}' is a research command of the {RESEARCH_DISTRIBUTION} distribution, "
              f"which is not installed; {RESEARCH_INSTALL}")


def available_commands() -> dict[str, Command]:
    """Every subcommand, in the order ``--help`` lists them: the research commands (each
    registered one, or an :class:`UnavailableCommand` saying what to install), any other
    registered command, then the built-in ones.  A registered command that fails to load is
    unavailable with its error, so that a broken plugin never takes ``uploads`` down."""
    registered: dict[str, Command] = {}
    for entry in entry_points(group=COMMAND_GROUP):
        if entry.name in BUILTIN_COMMANDS or entry.name in registered:
            continue
        source = getattr(entry.dist, "name", None) or entry.value
        try:
            loaded = entry.load()
        except Exception as error:
            registered[entry.name] = UnavailableCommand(
                entry.name, f"the '{entry.name}' command of {source} failed to load: "
                            f"{type(error).__name__}: {error}")
            continue
        if not isinstance(loaded, Command):
            registered[entry.name] = UnavailableCommand(
                entry.name, f"{entry.value} (from {source}) is not a zerorename.cli.Command")
            continue
        registered[entry.name] = loaded
    research: dict[str, Command] = {
        name: registered.pop(name) if name in registered else missing_research_command(name)
        for name in RESEARCH_COMMANDS}
    return {**research, **dict(sorted(registered.items())), **BUILTIN_COMMANDS}


def build_parser(commands: dict[str, Command] | None = None) -> CommandParser:
    commands = available_commands() if commands is None else commands
    parser = CommandParser(prog="zerorename",
                           description="Rename-free output committers for object stores.")
    parser.add_argument("--version", action="version", version=f"zerorename {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=CommandParser)
    for name, command in commands.items():
        # an unavailable command takes --help as any other argument: it answers with its line
        child = sub.add_parser(name, help=command.summary,
                               add_help=not isinstance(command, UnavailableCommand))
        command.configure(child)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    commands = available_commands()
    parser = build_parser(commands)
    args, unknown = parser.parse_known_args(argv)
    command = commands[args.command]
    if unknown and not command.passes_unknown_options:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        return int(command.run(args, unknown))
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
