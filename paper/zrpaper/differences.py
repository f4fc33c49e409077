"""Where the model differs from the paper (claims, the VIII.C probe, Table V) and Section 6's
tables for the ``fenced`` committer."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from zerorename_model.experiments.explored import NotApplicable
from zrpaper.cells import (
    PROTOCOL_NAMES,
    Cell,
    CellKey,
    JobProtocol,
    Verdict,
    by_protocol,
    index,
    kind,
    link,
    mark_of,
    protocols_in,
    runs_text,
    scope_runs,
    search_outcome,
    show_bool,
)
from zrpaper.claims import CLAIM_EXPLANATIONS, PAPER_CLAIMS, Claim, tablev_explanations
from zrpaper.race import RaceRow
from zrpaper.results import Results
from zrpaper.settings import RACE_PROPS, RACE_SCOPES

#: the committer of Section 6 and its variant without the fence
FENCED = "fenced"
FENCED_VARIANT = "fenced+no-fence"

def _claim_cells(claim: Claim, all_cells: Sequence[Cell]) -> list[Cell]:
    """The cells a claim is about, under every protocol they were decided for (results made
    before cells had a protocol: one cell per committer, store and property)."""
    cells: dict[CellKey, Cell] | dict[tuple[str, str, str, JobProtocol | None], Cell] = (
        index(all_cells) if all(c.protocol is None for c in all_cells) else {
            (c.committer, c.store, c.prop, c.protocol): c for c in all_cells if c.in_matrix})
    return [cell for key, cell in cells.items() if key[0] in claim.committers
            and key[1] in claim.stores and key[2] in claim.props]


def _summary(cells: list[Cell]) -> str:
    """How many cells of each kind, per protocol when the cells have one."""
    groups: dict[str | None, Counter[str]] = {}
    for cell in cells:
        groups.setdefault(None if cell.protocol is None else cell.protocol.value,
                          Counter())[kind(cell)] += 1
    return "; ".join(("" if protocol is None else f"{protocol}: ")
                     + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
                     for protocol, counts in sorted(groups.items(), key=lambda g: g[0] or ""))


def _contradicts(claim: Claim, cell: Cell) -> bool:
    if cell.verdict is Verdict.NA:
        return False
    return (cell.verdict is Verdict.VIOLATED) != (claim.expected == "violated")


def render_differences(results: Results) -> str:
    probed = race_props(results)
    lines = ["### The verdict matrix against the paper's claims", "",
             "| claim | source | cells | the paper says | ours |", "|---|---|---|---|---|"]
    differing: list[tuple[Claim, list[Cell]]] = []
    all_cells = results.cells
    for claim in PAPER_CLAIMS:
        cells = _claim_cells(claim, all_cells)
        wrong = [c for c in cells if _contradicts(claim, c)]
        summary = _summary(cells)
        verdict = (f"**differs**: {summary}" if wrong else f"agrees: {summary}" if cells
                   else "not computed")
        lines.append(f"| {claim.key} | {claim.section} | {' '.join(claim.committers)} on "
                     f"{' '.join(claim.stores)}: {', '.join(claim.props)} | {claim.expected} "
                     f"| {verdict} |")
        if wrong:
            differing.append((claim, wrong))
    for claim, wrong in differing:
        lines += ["", f"#### {claim.key} ({claim.section})", "",
                  f"The paper: \"{claim.quote}\".", "",
                  "Ours: " + "; ".join(
                      f"{c.committer} on {c.store}, {c.prop}"
                      + (f" ({c.protocol.value}'s protocol)" if c.protocol else "") + ": "
                      f"{link(kind(c), c.trace)}"
                      + (f" (scope `{c.scope}`)" if c.scope is not None else "")
                      for c in wrong) + ".", "",
                  "Why: " + CLAIM_EXPLANATIONS.get(
                      claim.key, "unexplained so far: read the witness traces.")]
    lines += ["", "### The VIII.C race: Hadoop's job commit protocol against Spark's", "",
              "The same scope (2 tasks, at most 2 attempts each, one partitioned attempt at any "
              "point of any schedule) with the job commit told nothing (Hadoop: it lists the "
              "store) or told the accepted attempts' messages (Spark):", "",
              "| committer | store | " + " | ".join(
                  f"{p}, {scope.split('-')[1]}" for scope in RACE_SCOPES for p in probed)
              + " |",
              "|---|---|" + "---|" * (len(RACE_SCOPES) * len(probed))]
    race = results.race
    rows: dict[tuple[str, str], list[RaceRow]] = {}
    for probe in race:
        rows.setdefault((probe.committer, probe.store), []).append(probe)
    for (committer, store), probe_rows in rows.items():
        lines.append(f"| {committer} | {store} | " + " | ".join(race_marks(probe_rows, probed))
                     + " |")
    cut_off = any(not row.explored.complete and any(
        v.verdict is Verdict.HOLDS for _prop, v in row.verdicts) for row in race)
    lines += ["", "(`holds`: the scope was enumerated completely"
              + ("; `holds*`: the run budget ran out first" if cut_off else "") + ".)"]
    table = results.tablev
    labels = dict(table.attributes)
    explanations = tablev_explanations()
    lines += ["", "### Table V against the paper", ""]
    if not table.differences:
        lines.append("Every computed cell agrees with the paper.")
    for d in table.differences:
        cell = table.cells[d.committer][d.attribute]
        why = explanations.get((d.committer, d.attribute),
                               "unexplained so far: read the witness trace.")
        lines += [f"#### {d.committer}: {labels[d.attribute]} (ours {d.ours}, paper "
                  f"{d.paper})", "",
                  f"Finding: {d.reason} ({link('trace', cell.trace)}).", "",
                  f"Why: {why}", ""]
    return "\n".join(lines).rstrip()



def race_props(results: Results) -> list[str]:
    """The VIII.C probe's properties these results hold for every row (results made before a
    property joined :data:`RACE_PROPS` lack it)."""
    race = results.race
    return [p for p in RACE_PROPS if all(p in row.by_prop for row in race)]


def race_marks(probe_rows: Sequence[RaceRow], props: Sequence[str]) -> list[str]:
    by_scope = {r.scope: r for r in probe_rows}
    marks = []
    for scope in RACE_SCOPES:
        for prop in props:
            row = by_scope[scope]
            v = row.by_prop[prop]
            marks.append(link("**violated**", v.trace) if v.verdict is Verdict.VIOLATED
                         else "holds" if row.explored.complete else "holds\\*")
    return marks


def render_fenced(results: Results) -> str:
    """Section 7's tables: the fenced committer's matrix row with what its explorations
    covered, its Table V column with what each probe found (and the job commit's atomicity
    for a reader of its record), and the VIII.C probe with and without the fence."""
    props = results.properties
    probed = race_props(results)
    all_cells = results.cells
    typed = [c for c in all_cells if c.committer == FENCED and c.in_matrix]
    cells = by_protocol(typed)
    protocols = protocols_in(typed)
    explorations = scope_runs(all_cells)
    lines = [] if protocols == [None] else [
        "Each cell: " + " / ".join(PROTOCOL_NAMES[p] for p in protocols) + ".", ""]
    lines += ["| store | " + " | ".join(props) + " | what was explored |",
              "|---|" + "---|" * (len(props) + 1)]
    for store in results.stores:
        row = [c for c in all_cells if (c.committer, c.store) == (FENCED, store)
               and c.bug is None]
        if not row:
            continue
        marks = [" / ".join(mark_of(cells[(FENCED, store, p)][q])
                            if q in cells[(FENCED, store, p)] else "–" for q in protocols)
                 for p in props if (FENCED, store, p) in cells]
        mine = [e for (c, s, _scope), e in explorations.items() if (c, s) == (FENCED, store)]
        if mine:
            complete = sum(1 for e in mine if e.complete)
            covered = (f"{len(mine)} scopes, {complete} enumerated completely; "
                       f"{sum(e.search.runs for e in mine)} runs, "
                       f"{sum(e.search.states for e in mine)} states")
        else:
            reasons = sorted({c.explored.reason for c in row
                              if isinstance(c.explored, NotApplicable)})
            covered = "not explored: " + "; ".join(reasons)
        lines.append(f"| {store} | " + " | ".join(marks) + f" | {covered} |")
    table = results.tablev
    column = table.cells.get(FENCED)
    if column is not None:
        labels = dict(table.attributes)
        lines += ["", "| attribute | `fenced` | what the probe's search found | runs, states |",
                  "|---|---|---|---|"]
        for attribute, cell in column.items():
            e = cell.explored
            how = search_outcome(e.found, e.complete)
            lines.append(f"| {labels[attribute]} | {link(show_bool(cell.value), cell.trace)}"
                         f" | {cell.detail} | {runs_text(e.runs)}, {e.states} states "
                         f"({how}) |")
        reader = table.record_reader.get(FENCED)
        if reader is not None:
            searched = "; ".join(
                f"{driver}'s protocol: {runs_text(r.runs)}, {r.states} states "
                f"({search_outcome(r.found, r.complete)})"
                for driver, r in reader.explored.items())
            value = link(show_bool(reader.value), reader.trace)
            lines.append(f"| Atomic Job Commit, for a reader of `_SUCCESS` "
                         f"(`{reader.reader}`) | {value} | {reader.detail} | {searched} |")
    rows: dict[str, list[RaceRow]] = {}
    for probe in results.race:
        if probe.committer in (FENCED, FENCED_VARIANT):
            rows.setdefault(f"{probe.committer} | {probe.store}", []).append(probe)
    if rows:
        lines += ["", "| committer | store | " + " | ".join(
            f"{p}, {scope.split('-')[1]}" for scope in RACE_SCOPES for p in probed) + " |",
                  "|---|---|" + "---|" * (len(RACE_SCOPES) * len(probed))]
        for key, probe_rows in rows.items():
            lines.append(f"| {key} | " + " | ".join(race_marks(probe_rows, probed)) + " |")
        witnesses = [(p, prop, v) for probe_rows in rows.values() for p in probe_rows
                     for prop, v in p.verdicts if v.verdict is Verdict.VIOLATED]
        for p, prop, v in witnesses:
            lines += ["", f"`{p.committer}` on {p.store}, scope `{p.scope}`, "
                          f"{prop}: {v.witness} ({link('trace', v.trace)})."]
    return "\n".join(lines)


