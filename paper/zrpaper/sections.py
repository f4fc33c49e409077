"""The paper's sections about how the results were made (scopes, budgets, coverage, merges) and
Table V."""

from __future__ import annotations

from zrpaper.cells import link, scope_runs, show_bool
from zrpaper.results import Results


def _faults(faults: dict[str, int | bool]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(faults.items())) or "none"


def render_explored(results: Results) -> str:
    budget, timing = results.budget, results.timing
    explorations = scope_runs(results.cells)
    complete = sum(1 for e in explorations.values() if e.complete)
    lines = [
        f"Budget: at most **{budget.max_runs} runs per scope** for every (committer, store) "
        f"pair (no time limit, so the results do not depend on the machine)"
        + (f"; where a scope was cut off before a property was violated, hypothesis then tried "
           f"{budget.hypothesis_examples} derandomized examples per open property"
           if budget.hypothesis_examples else
           "; a scope cut off by the budget is not sampled further (its cells read `holds*`)")
        + ". " + _deepened(results)
        + f"VIII.C probe: at most {results.race_max_runs} runs per scope. "
        + f"Table V: at most {results.tablev_max_runs} runs per probe.",
        "",
        f"Explorations behind the verdicts (for a violated cell the scope that violated it, "
        f"for a holding cell every scope that checks it): {len(explorations)} "
        f"(committer, store, scope) explorations, {complete} of them enumerated completely; "
        f"{sum(e.search.runs for e in explorations.values())} runs, "
        f"{sum(e.search.states for e in explorations.values())} distinct states. "
        f"Time on {results.workers} worker processes: matrix {timing.matrix_wall_s} s "
        f"({timing.matrix_cpu_s} s CPU), VIII.C probe {timing.race_wall_s} s, "
        f"Table V {timing.tablev_wall_s} s." + _merges(results),
        "",
        "| scope | job commit protocol | tasks x attempts x files | faults (at most) "
        "| destinations | properties it decides |",
        "|---|---|---|---|---|---|",
    ]
    for scope in results.scopes:
        lines.append(
            f"| {scope.name} | {scope.driver} | {scope.tasks} x {scope.attempts} x "
            f"{len(scope.files)} | {_faults(scope.faults)} | "
            f"{', '.join(d.removeprefix('s3://bucket/') for d in scope.dests)} | "
            f"{', '.join(scope.props)} |")
    lines += ["", "| committer | explorations | enumerated completely | runs | states |",
              "|---|---|---|---|---|"]
    for committer in results.committers:
        mine = [e for (c, _s, _scope), e in explorations.items() if c == committer]
        lines.append(f"| {committer} | {len(mine)} | {sum(1 for e in mine if e.complete)} | "
                     f"{sum(e.search.runs for e in mine)} | "
                     f"{sum(e.search.states for e in mine)} |")
    return "\n".join(lines)


def _merges(results: Results) -> str:
    """Which rows were explored after the full run and merged in, when, how (provenance)."""
    text = ""
    for m in results.merged:
        t = m.timing
        parts = ([f"matrix rows of {', '.join(f'`{c}`' for c in m.matrix)}"]
                 if m.matrix else [])
        parts += ([f"VIII.C rows of {', '.join(f'`{c}` on {s}' for c, s in m.race)}"]
                  if m.race else [])
        parts += ([f"Table V column of {', '.join(f'`{c}`' for c in m.tablev)}"]
                  if m.tablev else [])
        raised = m.deep_raised_from
        same = (m.budget == results.budget
                and (raised is not None or m.deep_budget == results.deep_budget)
                and m.race_max_runs == results.race_max_runs
                and m.tablev_max_runs == results.tablev_max_runs)
        budgets = ("with the same budgets" if raised is None
                   else f"with the same first-pass budget and the second pass raised from "
                        f"{raised:,} to {m.deep_budget.max_runs:,} runs per scope (every "
                        "cell outside these rows was decided within the earlier second pass, "
                        "so a full run at the larger budget gives them unchanged)")
        text += (f" Explored later and merged into these results on {m.at[:10]} "
                 f"(`make_paper.py --merge --committers {','.join(m.committers)}`, which "
                 f"replaces only those parts and their traces): {'; '.join(parts)}, "
                 f"{budgets if same else 'with other budgets: ' + str(m.to_json())}; "
                 f"on {m.workers} worker processes, matrix {t.matrix_wall_s} s "
                 f"({t.matrix_cpu_s} s CPU), VIII.C probe {t.race_wall_s} s, "
                 f"Table V {t.tablev_wall_s} s.")
    if text:
        text += " The times before this are the full run's."
    return text


def _deepened(results: Results) -> str:
    pairs = results.deepened
    if not pairs:
        return ""
    by_committer: dict[str, list[str]] = {}
    for row in pairs:  # [committer, store] (before protocols), or a row key: see compute.py
        committer, store, *rest = row
        protocol, bug = [*rest, None, None][:2]
        by_committer.setdefault(committer, []).append(
            store + "".join(f" ({x})" for x in (protocol, bug) if x))
    listed = "; ".join(f"`{c}` on {', '.join(stores)}" for c, stores in by_committer.items())
    text = (f"Every cell that held in the scopes explored but with some scope cut off was "
            f"explored again with at most **{results.deep_budget.max_runs} runs per "
            f"scope**: {listed}. ")
    lag = results.lag_budget
    if lag:
        text += ("Every cell still cut off on a lagging store was then explored a third time "
                 f"with at most **{lag.max_lag} visibility events pending at once** and "
                 f"{lag.max_runs:,} runs per scope (the cells it proved read `holds\u2020` and "
                 "are listed under the matrix). ")
    return text


def render_tablev(results: Results) -> str:
    table = results.tablev
    names = list(table.cells)
    columns = table.paper_columns
    lines = ["| attribute | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for attribute, label in table.attributes:
        row = []
        for name in names:
            cell = table.cells[name][attribute]
            text = show_bool(cell.value)
            if not cell.value:
                text = link(text, cell.trace)
            paper = table.paper[attribute].get(columns.get(name, ""))
            if paper is not None and paper != cell.value:
                text = f"**{text}** (paper: {show_bool(paper)})"
            row.append(text)
        lines.append(f"| {label} | " + " | ".join(row) + " |")
    ours: dict[str, list[str]] = {}
    for name in names:
        if name in columns:
            ours.setdefault(columns[name], []).append(f"`{name}`")
    lines += ["", f"Paper: {table.source}. Its columns are "
              + ", ".join(f"{paper} (our {' and '.join(mine)})" for paper, mine in ours.items())
              + f"; the other columns are not in the paper. {len(table.differences)} cells "
              "differ from the paper (bold). A `False` links to the trace of the run that "
              "decided it: the counterexample for a `forall` attribute, the fault-free run "
              "for an `exists` attribute that no schedule showed."]
    return "\n".join(lines)


