"""Tables, plots and the READMEs' performance blocks, from the benchmarks' JSON results.

Rendering is kept apart from measuring so that the blocks can be checked against the
committed JSON without measuring anything: ``tests/test_bench_smoke.py`` asserts that the block
between :data:`BEGIN` and :data:`END` in ``bench/README.md`` is exactly :func:`readme_block` of
``results/side_by_side.json``, ``results/latency.json`` and ``results/commit_costs.json``, and
that the short summary between :data:`SUMMARY_BEGIN` and :data:`SUMMARY_END` in the top-level
``README.md`` (for users: one paragraph) is :func:`summary_block` of the first.

    .venv/bin/python bench/render.py            # rewrite both blocks from the results
    .venv/bin/python bench/render.py --check    # exit 1 if either is stale

The rendering itself is in :mod:`render_pages` (the results pages), :mod:`render_plots` and
:mod:`render_readme` (the two blocks), on the shared formats of :mod:`render_common`; this
module is the command and the one name the benchmarks and tests import them by.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from render_pages import latency_markdown, markdown
from render_plots import latency_plot, plot
from render_readme import BEGIN, END, SUMMARY_BEGIN, SUMMARY_END, readme_block, summary_block
from targets import targets_markdown

__all__ = ["BEGIN", "END", "README", "RESULTS", "SUMMARY_BEGIN", "SUMMARY_END", "TOP_README",
           "current_block", "current_summary", "latency_markdown", "latency_plot", "load",
           "main", "markdown", "plot", "readme_block", "readme_section", "summary_block",
           "targets_markdown", "update_readme"]

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
#: the page with the whole performance block
README = HERE / "README.md"
#: the repository's front page, with the users' summary
TOP_README = HERE.parent / "README.md"


def load(path: Path) -> dict[str, Any] | None:
    try:
        data: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data


def current_block(results: Path = RESULTS) -> str:
    side = load(results / "side_by_side.json")
    if side is None:
        raise FileNotFoundError(results / "side_by_side.json")
    return readme_block(side, load(results / "latency.json"), load(results / "commit_costs.json"))


def current_summary(results: Path = RESULTS) -> str:
    side = load(results / "side_by_side.json")
    if side is None:
        raise FileNotFoundError(results / "side_by_side.json")
    return summary_block(side)


def readme_section(text: str, begin: str = BEGIN, end: str = END) -> str | None:
    """The block between the markers in ``text`` (markers included), or None."""
    start = text.find(begin)
    stop = text.find(end, start)
    if start < 0 or stop < 0:
        return None
    return text[start:stop + len(end)]


def _update(readme: Path, block: str, begin: str, end: str) -> bool:
    """Replace one block (re-reading the page just before writing: others edit other
    sections).  Returns whether it changed.  Without markers, nothing is written."""
    text = readme.read_text()
    old = readme_section(text, begin, end)
    if old is None:
        print(f"{readme}: no {begin[:30]}... marker; add the markers where the block goes",
              file=sys.stderr)
        return False
    if old == block:
        return False
    readme.write_text(text.replace(old, block))
    return True


def update_readme(readme: Path = README, results: Path = RESULTS,
                  top: Path = TOP_README) -> bool:
    """Both blocks: the whole one in ``bench/README.md``, the summary in the top README."""
    whole = _update(readme, current_block(results), BEGIN, END)
    summary = _update(top, current_summary(results), SUMMARY_BEGIN, SUMMARY_END)
    return whole or summary


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a README's block is stale")
    args = ap.parse_args(argv)
    if args.check:
        ok = (readme_section(README.read_text()) == current_block()
              and readme_section(TOP_README.read_text(), SUMMARY_BEGIN, SUMMARY_END)
              == current_summary())
        print("README blocks up to date" if ok else "a README block is stale: run "
              "bench/render.py")
        return 0 if ok else 1
    print("README blocks rewritten" if update_readme() else "README blocks unchanged")
    return 0


if __name__ == "__main__":
    sys.exit(main())
