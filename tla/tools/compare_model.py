"""Compare the TLA+ expected results with the Python model's verdict matrix.

    python tla/tools/compare_model.py            # print the comparison table
    python tla/tools/compare_model.py --write    # replace it in tla/README.md
    python tla/tools/compare_model.py --check    # exit 1 if a difference has no reason

Inputs, all read at run time (nothing here knows what either side "should" say):

* ``tla/expected.json``: what TLC finds for every ``tla/*.cfg``;
* ``tla/model_map.json``: which model cell (committer, store profile, property) and which set
  of the model's exploration scopes each configuration corresponds to, the job-commit protocol
  of every scope set (``hadoop`` or ``spark``: the matrix decides a cell per protocol), and a
  written reason for every configuration whose result is not the model's;
* ``paper/results/verdicts.json``: the model's verdict matrix as ``paper/make_paper.py``
  generated it from ``model/zerorename_model/experiments/verdicts.py``.

The model decides a cell by exploring its scopes in order and stops at the first scope that
violates the property, so a violated cell's ``explored.scope`` is the witness scope: the scopes
before it held (within the budget), the ones after it were not explored.  A cell that holds
lists every scope it explored.  From that, :func:`scope_verdict` derives the model's verdict
restricted to the scopes a configuration corresponds to.

A cell is looked up by (committer, store, property, protocol), the protocol being the scope
set's; a cell whose ``explored.runs_of`` names the other protocol was decided by that
protocol's scopes (the same runs, for a committer that takes no task commit messages), so its
scope set is read as the same families under that protocol (:func:`same_runs_scope`); rows
of a production bug's comparison (a non-null ``bug``) are not the matrix proper and are never
compared.  Results written before the matrix was per protocol have no ``protocol`` on
their cells (one cell per committer, store and property, over both protocols' scopes) and named
some scopes differently: for those the cell is matched without protocol and a scope set's
``legacy_scopes``, where it has them, replace its ``scopes``.

tests/test_tla.py checks that README.md holds exactly :func:`block`'s output between the
markers, and that :func:`unexplained` is empty: a change of the model's matrix that breaks an
agreement (or ends a difference) fails the test until the mapping says why.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # a script beside its helpers
import readme_block as _blocks

TLA_DIR = Path(__file__).resolve().parent.parent
ROOT = TLA_DIR.parent
VERDICTS = ROOT / "paper" / "results" / "verdicts.json"
BEGIN = "<!-- model-comparison:begin -->"
END = "<!-- model-comparison:end -->"

#: verdicts of a model cell restricted to some scopes
HOLDS = "holds"            # every scope held and was enumerated completely
HOLDS_SAMPLED = "holds*"   # no scope violated, but some was only sampled (budget ran out)
VIOLATED = "violated"
NOT_EXPLORED = "not explored"  # an earlier scope violated, so the model stopped before these
NOT_CHECKED = "not checked"    # none of these scopes checks the property
NOT_APPLICABLE = "n/a"         # the model says the cell cannot arise
NO_CELL = "no cell"            # the configuration checks something the matrix has no cell for
MISSING = "missing"            # the matrix has no such cell


def load_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def load_expected() -> list[dict[str, Any]]:
    configs: list[dict[str, Any]] = load_json(TLA_DIR / "expected.json")["configs"]
    return configs


def load_map() -> dict[str, Any]:
    mapping: dict[str, Any] = load_json(TLA_DIR / "model_map.json")
    return mapping


def load_verdicts(path: Path = VERDICTS) -> dict[str, Any]:
    verdicts: dict[str, Any] = load_json(path)
    return verdicts


@dataclass(frozen=True)
class ScopeSet:
    """A named set of the model's scopes, all under one job-commit protocol."""

    name: str
    protocol: str                 # "hadoop" or "spark", as the cells' ``protocol``
    scopes: tuple[str, ...]
    legacy_scopes: tuple[str, ...]  # their names in results without per-protocol cells
    why: str


def scope_set(mapping: dict[str, Any], name: str) -> ScopeSet:
    raw = mapping["scope_sets"][name]
    return ScopeSet(name, raw["protocol"], tuple(raw["scopes"]),
                    tuple(raw.get("legacy_scopes", raw["scopes"])), raw["why"])


def per_protocol(verdicts: dict[str, Any]) -> bool:
    """Whether the results decide cells per protocol (their cells carry ``protocol``)."""
    return any("protocol" in cell for cell in verdicts["cells"])


def scopes_in(verdicts: dict[str, Any], scopes: ScopeSet) -> tuple[str, ...]:
    """The scope set's scope names as ``verdicts`` names them."""
    return scopes.scopes if per_protocol(verdicts) else scopes.legacy_scopes


@dataclass(frozen=True)
class ScopeVerdict:
    """The model's verdict on one cell, restricted to some of its scopes."""

    verdict: str
    detail: str


def _cell(verdicts: dict[str, Any], committer: str, store: str, prop: str,
          protocol: str | None) -> dict[str, Any] | None:
    """The matrix's cell (no production bug's row); ``protocol`` is matched only on cells that
    have one (older results have none)."""
    for cell in verdicts["cells"]:
        if cell.get("bug") is not None:
            continue
        if (cell["committer"], cell["store"], cell["property"]) != (committer, store, prop):
            continue
        if protocol is None or "protocol" not in cell or cell["protocol"] == protocol:
            found: dict[str, Any] = cell
            return found
    return None


def same_runs_scope(scope: str, protocol: str) -> str:
    """The scope of the same family under ``protocol`` (``abort-crash-spark`` ->
    ``abort-crash-hadoop``): for a committer that takes no task commit messages, both
    protocols' scopes are the same runs, and the matrix explores only one of them
    (the cell's ``explored.runs_of`` names it)."""
    family, _protocol = scope.rsplit("-", 1)
    return f"{family}-{protocol}"


def scope_verdict(verdicts: dict[str, Any], committer: str, store: str, prop: str,
                  scopes: Sequence[str], protocol: str | None = None) -> ScopeVerdict:
    """What the model found for (committer, store, prop) under ``protocol`` in ``scopes``
    only."""
    cell = _cell(verdicts, committer, store, prop, protocol)
    if cell is None:
        return ScopeVerdict(MISSING, "no such cell in verdicts.json")
    if cell["verdict"] == "n/a":
        return ScopeVerdict(NOT_APPLICABLE, cell["explored"].get("reason", ""))
    shared = cell["explored"].get("runs_of")
    if shared:  # the same runs as the other protocol's scopes, explored once under that one
        scopes = [same_runs_scope(name, shared) for name in scopes]
    order = [s["name"] for s in verdicts["scopes"]]
    unknown = [s for s in scopes if s not in order]
    if unknown:
        return ScopeVerdict(MISSING, f"verdicts.json has no scope {', '.join(unknown)}")
    checking = [s for s in verdicts["scopes"] if prop in s["props"] and s["name"] in scopes]
    if not checking:
        return ScopeVerdict(NOT_CHECKED, f"no scope of {', '.join(scopes)} checks {prop}")
    per_scope: dict[str, str] = {}
    explored = cell["explored"]
    if cell["verdict"] == VIOLATED:
        witness = explored["scope"]
        # the scopes explored up to the witness, with their completeness (older results do not
        # record it: a scope before the witness then counts as sampled)
        before = {s["scope"]: s for s in explored.get("scopes", [])}
        for scope in checking:
            position, at = order.index(scope["name"]), order.index(witness)
            held = before.get(scope["name"], {}).get("complete")
            per_scope[scope["name"]] = (VIOLATED if position == at else
                                        (HOLDS if held else HOLDS_SAMPLED) if position < at
                                        else NOT_EXPLORED)
    else:
        done = {s["scope"]: s for s in explored["scopes"]}
        for scope in checking:
            if scope["name"] not in done:
                per_scope[scope["name"]] = NOT_EXPLORED
            else:
                per_scope[scope["name"]] = HOLDS if done[scope["name"]]["complete"] \
                    else HOLDS_SAMPLED
    states = set(per_scope.values())
    if VIOLATED in states:
        verdict = VIOLATED
    elif NOT_EXPLORED in states:
        verdict = NOT_EXPLORED
    elif states == {HOLDS}:
        verdict = HOLDS
    else:
        verdict = HOLDS_SAMPLED
    detail = ", ".join(f"{name}: {state}" for name, state in per_scope.items())
    return ScopeVerdict(verdict, detail)


@dataclass(frozen=True)
class Row:
    """One configuration's comparison."""

    config: str
    expected: str            # "holds" or "violated"
    cell: str                # "committer / store / property" or "—"
    scopes: str              # the scope set's name and protocol, or "—"
    model: ScopeVerdict | None
    cell_verdict: str        # the whole cell's verdict, or "—"
    status: str              # "agree", "differ" or "not compared"
    reason: str | None       # why, from model_map.json, for every status but "agree"
    reason_for: str | None   # the model verdict the reason was written for


def status_of(expected: str, model: ScopeVerdict | None) -> str:
    if model is None:
        return "not compared"
    if model.verdict in (HOLDS, HOLDS_SAMPLED):
        return "agree" if expected == "holds" else "differ"
    if model.verdict == VIOLATED:
        return "agree" if expected == "violated" else "differ"
    return "not compared"


def rows(expected: list[dict[str, Any]] | None = None, mapping: dict[str, Any] | None = None,
         verdicts: dict[str, Any] | None = None) -> list[Row]:
    expected = load_expected() if expected is None else expected
    mapping = load_map() if mapping is None else mapping
    verdicts = load_verdicts() if verdicts is None else verdicts
    out = []
    for entry in expected:
        m = mapping["configs"][entry["config"]]
        model = None
        cell_text = scopes_text = cell_verdict = "—"
        if m["cell"] is not None:
            committer, store, prop = m["cell"]
            scopes = scope_set(mapping, m["scopes"])
            model = scope_verdict(verdicts, committer, store, prop, scopes_in(verdicts, scopes),
                                  scopes.protocol)
            cell_text = f"`{committer}` / `{store}` / `{prop}`"
            scopes_text = f"{scopes.name} ({scopes.protocol})"
            whole = _cell(verdicts, committer, store, prop, scopes.protocol)
            if whole is not None:
                cell_verdict = whole["verdict"]
                if whole["verdict"] == VIOLATED:
                    cell_verdict += f" ({whole['explored']['scope']})"
        differs = m.get("differs") or {}
        out.append(Row(entry["config"], entry["expect"], cell_text, scopes_text, model,
                       cell_verdict, status_of(entry["expect"], model), differs.get("reason"),
                       differs.get("model")))
    return out


def verdict_key(row: Row) -> str:
    """The model verdict a reason must name: the scope verdict, or NO_CELL."""
    return row.model.verdict if row.model is not None else NO_CELL


def unexplained(table: list[Row] | None = None) -> list[str]:
    """Problems: a difference without a reason, a reason written for another model verdict,
    or a reason on a row that now agrees (stale)."""
    problems = []
    for row in rows() if table is None else table:
        if row.status == "agree":
            if row.reason:
                problems.append(f"{row.config}: agrees with the model now, but model_map.json "
                                f"still explains a difference (remove it)")
            continue
        if not row.reason:
            problems.append(f"{row.config}: TLA+ {row.expected}, model {verdict_key(row)}: "
                            f"model_map.json gives no reason")
        elif row.reason_for != verdict_key(row):
            problems.append(f"{row.config}: the reason in model_map.json was written for a "
                            f"model verdict '{row.reason_for}', the model now says "
                            f"'{verdict_key(row)}'")
    return problems


def table(table_rows: list[Row]) -> str:
    lines = ["| config | TLA+ | model cell | scopes | model (those scopes) | whole cell | agree? "
             "| why they differ |",
             "|---|---|---|---|---|---|---|---|"]
    for r in table_rows:
        model = "—" if r.model is None else f"{r.model.verdict} ({r.model.detail})"
        agree = {"agree": "yes", "differ": "**no**", "not compared": "—"}[r.status]
        lines.append(f"| `{r.config}` | {r.expected} | {r.cell} | {r.scopes} | {model} | "
                     f"{r.cell_verdict} | {agree} | {r.reason or ''} |")
    return "\n".join(lines)


def summary(table_rows: list[Row]) -> str:
    count = {s: sum(r.status == s for r in table_rows) for s in ("agree", "differ",
                                                                  "not compared")}
    return (f"{count['agree']} agree, {count['differ']} differ, "
            f"{count['not compared']} not compared (of {len(table_rows)} configurations).")


def scope_sets_table(mapping: dict[str, Any], verdicts: dict[str, Any]) -> str:
    lines = ["| scope set | protocol | model scopes | why |", "|---|---|---|---|"]
    for name in mapping["scope_sets"]:
        scopes = scope_set(mapping, name)
        names = ", ".join(f"`{s}`" for s in scopes_in(verdicts, scopes))
        lines.append(f"| {name} | {scopes.protocol} | {names} | {scopes.why} |")
    return "\n".join(lines)


def block() -> str:
    mapping, verdicts = load_map(), load_verdicts()
    table_rows = rows(mapping=mapping, verdicts=verdicts)
    return (f"{BEGIN}\n{scope_sets_table(mapping, verdicts)}\n\n{table(table_rows)}\n\n"
            f"{summary(table_rows)}\n{END}")


def readme_block(text: str) -> str:
    return _blocks.readme_block(text, BEGIN, END)


def main(argv: list[str]) -> int:
    if "--write" in argv:
        _blocks.write_block(block(), BEGIN, END)
    elif "--check" in argv:
        problems = unexplained()
        print("\n".join(problems) or summary(rows()))
        return 1 if problems else 0
    else:
        print(block())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
