"""The paper: the template with every generated section substituted (a pure function of the
results and the template)."""

from __future__ import annotations

from typing import Any

from zrpaper.differences import render_differences, render_fenced
from zrpaper.matrix import render_matrix
from zrpaper.sections import render_explored, render_tablev
from zrpaper.settings import PAPER, TEMPLATE


def render(template: str, results: dict[str, Any]) -> str:
    """The paper: the template with every generated section substituted."""
    sections = {
        "{{VERDICT_MATRIX}}": render_matrix(results),
        "{{TABLEV}}": render_tablev(results),
        "{{DIFFERENCES}}": render_differences(results),
        "{{EXPLORED}}": render_explored(results),
        "{{FENCED}}": render_fenced(results),
    }
    for placeholder, text in sections.items():
        if template.count(placeholder) != 1:
            raise ValueError(f"the template must hold {placeholder} exactly once")
        template = template.replace(placeholder, text)
    return template



def write_paper(results: dict[str, Any]) -> None:
    PAPER.write_text(render(TEMPLATE.read_text(encoding="utf-8"), results), encoding="utf-8")


