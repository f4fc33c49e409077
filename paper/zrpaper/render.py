"""The paper: the template with every generated section substituted (a pure function of the
results and the template)."""

from __future__ import annotations

from collections.abc import Callable

from zrpaper.differences import render_differences, render_fenced
from zrpaper.figures import render_matrix_figures
from zrpaper.hadoop_rows import render_section as render_hadoop_rows
from zrpaper.matrix import render_matrix
from zrpaper.permissions import render_section as render_permissions
from zrpaper.production import render_production_bugs
from zrpaper.results import Results
from zrpaper.sections import render_explored, render_tablev
from zrpaper.settings import PAPER, RESULTS, TEMPLATE

#: the reference committers' ambiguous-outcome table, written by its own generator
#: (``python -m zerorename_bridge.reference_ambiguous``): the paper includes it as it stands
REFERENCE_AMBIGUOUS = RESULTS / "reference_ambiguous.md"


def render_reference_ambiguous(_results: Results) -> str:
    """The reference committers explored with lost answers and 409s (Section 8)."""
    text = REFERENCE_AMBIGUOUS.read_text(encoding="utf-8").strip()
    return text.replace("`reference_traces/", "`results/reference_traces/")  # from paper/


#: each placeholder of the template, and what renders the section that replaces it
SECTIONS: dict[str, Callable[[Results], str]] = {
    "{{VERDICT_MATRIX}}": render_matrix,
    "{{MATRIX_FIGURES}}": render_matrix_figures,
    "{{PRODUCTION_BUGS}}": render_production_bugs,
    "{{TABLEV}}": render_tablev,
    "{{DIFFERENCES}}": render_differences,
    "{{EXPLORED}}": render_explored,
    "{{FENCED}}": render_fenced,
    "{{REFERENCE_AMBIGUOUS}}": render_reference_ambiguous,
    "{{PERMISSIONS}}": render_permissions,
    "{{HADOOP_ROWS}}": render_hadoop_rows,
}


def render(template: str, results: Results) -> str:
    """The paper: the template with every generated section substituted."""
    for placeholder in SECTIONS:
        if template.count(placeholder) != 1:
            raise ValueError(f"the template must hold {placeholder} exactly once")
    for placeholder, section in SECTIONS.items():
        template = template.replace(placeholder, section(results))
    return template


def write_paper(results: Results) -> None:
    PAPER.write_text(render(TEMPLATE.read_text(encoding="utf-8"), results), encoding="utf-8")
