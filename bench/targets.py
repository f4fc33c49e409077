"""Issue 15's targets, cell by cell, from the side-by-side results (a table for
``side_by_side.md``): kept apart from :mod:`render` so the targets live in one place."""

from __future__ import annotations

from typing import Any

__all__ = ["JOB_COMMIT_TARGET", "MULTIPART", "REQUESTS_TARGET", "targets_markdown"]


def _s(x: float) -> str:
    return f"{x:.2f}"


#: issue 15's targets for every multipart committer, against the minimal strategy's figures
REQUESTS_TARGET, JOB_COMMIT_TARGET = 1.05, 1.15
MULTIPART = ("magic", "fenced", "directory", "partitioned")


def _commit_ratio(row: dict[str, Any] | None, targeted: bool = True) -> str:
    value = ((row or {}).get("ratio_to_minimal") or {}).get("job_commit_seconds")
    if value is None:
        return "–"
    return f"{value:.2f}" + (" ✗" if targeted and value > JOB_COMMIT_TARGET else "")


def targets_markdown(report: dict[str, Any]) -> list[str]:
    """Issue 15's targets cell by cell: each committer's job commit and requests per file ×
    minimal (✗ above the target), from the rows' paired ratios."""
    cells = sorted({(r["server"], r["files"], r["threads"]) for r in report["rows"]
                    if r["threads"] is not None and "error" not in r},
                   key=lambda c: (c[0] != "moto", c[1], c[2]))
    if not cells:
        return []
    out = ["", "## Issue 15's targets", "",
           f"Job commit × minimal (target ≤ {JOB_COMMIT_TARGET}) of each multipart committer, and "
           f"their requests per file × minimal (target ≤ {REQUESTS_TARGET}); ✗ above a target.  "
           "`manifest` publishes by copy, and its target is on requests (job commit ≤ F + "
           "O(tasks) + ⌈F/1000⌉ deletes): its job commit × minimal is shown for comparison, "
           "unmarked, and its job-commit requests beyond F.", "",
           "| server | F | T | rounds | minimal job commit s | "
           + " | ".join(f"`{n}`" for n in (*MULTIPART, "manifest"))
           + " | requests / file × minimal | `manifest` job-commit requests − F |",
           "|---|---:|---:|---:|---:|" + "---|" * (len(MULTIPART) + 1) + "---|---:|"]
    for server, files, threads in cells:
        mine = {r["strategy"]: r for r in report["rows"] if r["server"] == server
                and r["files"] == files and r["threads"] == threads and "error" not in r}
        base = mine.get("minimal")
        if base is None:
            continue


        requests = [mine[n]["ratio_to_minimal"]["requests_per_file"] for n in MULTIPART
                    if n in mine and mine[n].get("ratio_to_minimal")]
        req = "–" if not requests else (f"{min(requests):.2f}–{max(requests):.2f}"
                                         + (" ✗" if max(requests) > REQUESTS_TARGET else ""))
        manifest = mine.get("manifest")
        extra = "–" if manifest is None else f"{manifest['job_commit_requests'] - files:,}"
        out.append(f"| {server} | {files:,} | {threads} | {base.get('repeats', 1)} | "
                   f"{_s(base['job_commit_seconds'])} | "
                   + " | ".join(_commit_ratio(mine.get(n)) for n in MULTIPART)
                   + f" | {_commit_ratio(mine.get('manifest'), targeted=False)}"
                   + f" | {req} | {extra} |")
    return out
