"""The Markdown pages of the side-by-side and latency results (``results/side_by_side.md``,
``results/latency.md``): every row a run measured, for readers of the results, where the
README blocks (:mod:`render_readme`) show only a summary.
"""

from __future__ import annotations

from typing import Any

from render_common import cells_of, load_text, repeats_note, rows_at, run_label, secs, size_text
from targets import targets_markdown


def markdown(report: dict[str, Any]) -> str:
    """``results/side_by_side.md``: every row of every (server, F), and its requests by phase."""
    env, job = report["environment"], report["job"]
    out = [f"# Side by side ({report['mode']} run)", "",
           f"{report['when']}, {env['machine']}, {env['cpus']} CPUs, Python {env['python']}, "
           f"boto3 {env['boto3']}, moto {env['moto']}, radosgw {env.get('radosgw', '?')}; "
           f"load average at start {env['load_average_at_start'][0]:.1f}, at end "
           f"{env['load_average_at_end'][0]:.1f}; total {report['total_seconds']:.0f} s.", "",
           f"Job: {job['file_bytes']:,} B files, tasks of {job['files_per_task']} files, "
           f"{job['slots']} tasks at a time, Spark's protocol (the driver passes the messages). "
           "Phases are separated by barriers; every request counted at the one boto3 client "
           "(s3fs: the same hooks on its own client).  **× minimal**: this row divided by the "
           "minimal strategy's at the same server, F and T (requests per file, job-commit "
           "requests, job commit s, whole run s)" + repeats_note(report) + "."]
    runs: dict[str, int] = {}
    for r in report["rows"]:
        if "run" in r:
            label = run_label(r, r["run"], "")
            runs[label] = runs.get(label, 0) + 1
    if len(runs) > 1:
        out += ["", "Rows measured at different times (`--merge`): " + "; ".join(
            f"{n} rows at {label}" for label, n in runs.items()) + "."]
    elif runs:
        out += ["", f"Committers as of commit {next(iter(runs)).split(' on ')[-1]}."]
    s3fs = report.get("s3fs")
    if s3fs:
        out += ["", f"s3fs: {s3fs['note']}."]
    for name, info in report["servers"].items():
        if "skipped" in info:
            out += ["", f"{name}: skipped — {info['skipped']}"]
    out += targets_markdown(report)
    for server, files in cells_of(report):
        out += ["", f"## {server}, F = {files:,}", "",
                "| strategy | T | requests / file | job-commit requests | bytes copied | "
                "write s | task commit s | job commit s | whole run s | × minimal | "
                "leftovers | load |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|"]
        for r in rows_at(report, server, files):
            t = "—" if r["threads"] is None else str(r["threads"])
            if "error" in r:
                out.append(f"| {r['strategy']} | {t} | failed: {r['error'][:120]} |"
                           + " |" * 9)
                continue
            ratio = r.get("ratio_to_minimal")
            rt = "" if not ratio else " / ".join(
                "" if v is None else f"{v:g}" for v in ratio.values())
            o = r["output"]
            left = "none" if not (o["leftover_hidden_objects"] or o["leftover_uploads"]) else \
                f"{o['leftover_hidden_objects']} objects, {o['leftover_uploads']} uploads"
            out.append(f"| {r['strategy']} | {t} | {r['requests_per_file']:.2f} | "
                       f"{r['job_commit_requests']:,} | {size_text(r['bytes_copied'])} | "
                       f"{secs(r['write_seconds'])} | {secs(r['task_commit_seconds'])} | "
                       f"{secs(r['job_commit_seconds'])} | {secs(r['whole_run_seconds'])} | "
                       f"{rt} | {left} | {load_text(r)} |")
        ops = [r for r in rows_at(report, server, files) if "error" not in r]
        if ops:
            out += ["", "Requests by phase and operation (the first thread count of each "
                    "strategy):", ""]
            shown: set[str] = set()
            for r in ops:
                if r["strategy"] in shown:
                    continue
                shown.add(r["strategy"])
                parts = []
                for phase, p in r["phases"].items():
                    if p["requests"]:
                        parts.append(f"{phase}: " + ", ".join(
                            f"{op} {n:,}" for op, n in p["requests"].items()))
                out.append(f"* **{r['strategy']}** — " + "; ".join(parts))
    return "\n".join(out) + "\n"


def latency_markdown(report: dict[str, Any]) -> str:
    """``results/latency.md``: each committer's job commit against the ⌈F/T⌉·r bound."""
    env = report["environment"]
    out = [f"# Job commit under latency ({report['mode']} run)", "",
           f"{report['when']}, {env['machine']}, {env['cpus']} CPUs, Python {env['python']}, "
           f"committers as of commit {env.get('reference_commit', '?')}; "
           f"load average at start {env['load_average_at_start'][0]:.1f}, at end "
           f"{env['load_average_at_end'][0]:.1f}; total {report['total_seconds']:.0f} s.", "",
           f"{report['files']:,} files in {report['tasks']} tasks, r = "
           f"{report['delay_ms']:g} ms per request ({report['store']}), Spark's protocol.  "
           "**bound** = ⌈F/T⌉·r; **own bound** = ⌈N/T⌉·r for the N requests the commit "
           "sent (as if all of them could overlap).", "",
           "| committer | T | job commit s | bound s | × bound | own bound s | requests | "
           "load |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in report["rows"]:
        out.append(f"| {r['committer']} | {r['threads']} | {r['commit_seconds']:.2f} | "
                   f"{r['bound_seconds']:.2f} | {r['ratio_to_bound']:g} | "
                   f"{r['own_requests_bound_seconds']:.2f} | {r['commit_requests']:,} | "
                   f"{r['load_average'][0]:.1f} |")
    return "\n".join(out) + "\n"

