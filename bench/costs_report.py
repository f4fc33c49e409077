"""The markdown report of ``commit_costs`` (``bench/results/commit_costs.md``): one section per
part, from the JSON report.  Apart from the measurements so that re-rendering needs no run."""

from __future__ import annotations

from typing import Any

__all__ = ["markdown"]


OPS = ("put", "get", "head", "list_page", "create_multipart", "upload_part",
       "complete_multipart", "copy", "rename", "delete", "delete_many", "abort_multipart",
       "list_multipart_uploads")
SHORT = {"list_page": "LIST", "create_multipart": "create", "upload_part": "part",
         "complete_multipart": "complete", "delete_many": "delete_many",
         "abort_multipart": "abort", "list_multipart_uploads": "list_uploads"}


def markdown(report: dict[str, Any]) -> str:
    env = report["environment"]
    out = [f"# Commit costs ({report['mode']} run)", "",
           f"{report['when']}, {env['machine']}, {env['cpus']} CPUs, Python {env['python']}, "
           f"boto3 {env['boto3']}, moto {env['moto']}; load average at start "
           f"{env['load_average_at_start'][0]:.1f}, at end {env['load_average_at_end'][0]:.1f}; "
           f"total {report['total_seconds']:.0f} s (by part: "
           + ", ".join(f"{k} {v:.0f} s" for k, v in report["part_seconds"].items()) + ")."]
    when = report.get("part_when") or {}
    if len(set(when.values())) > 1:  # parts re-measured separately (merge_previous)
        out += ["Parts measured at different times: "
                + ", ".join(f"{k} {v}" for k, v in when.items()) + "."]
    out += [""]
    rows = report["requests_per_file"]
    if rows:
        lay = rows[0]
        out += [f"## 1. Requests per committed file ({lay['tasks']} tasks x "
                f"{lay['files'] // lay['tasks']} files of {lay['file_bytes']} B)", "",
                "| committer | store | protocol | requests | per file | protocol minimum | "
                "min per file | measured / min | leftovers |",
                "|---|---|---|---:|---:|---:|---:|---:|---|"]
        for r in rows:
            o = r["output"]
            left = "none" if not (o["leftover_hidden_objects"] or o["leftover_uploads"]) else \
                f"{o['leftover_hidden_objects']} objects, {o['leftover_uploads']} uploads"
            out.append(f"| {r['committer']} | {r['store']} | {r['protocol']} | {r['total']} | "
                       f"{r['per_file']} | {r['minimum_total']} | {r['minimum_per_file']} | "
                       f"{r['total'] / r['minimum_total']:.2f} | {left} |")
        used = [op for op in OPS if any(op in r["requests"] or op in r["minimum"] for r in rows)]
        out += ["", "By operation, whole job: measured (minimum); `delete` and `delete_many` "
                "share one minimum, shown under `delete_many`.", "",
                "| committer | store | protocol | " + " | ".join(SHORT.get(o, o) for o in used)
                + " |", "|---|---|---|" + "---:|" * len(used)]
        for r in rows:
            cells = []
            for op in used:
                have, need = r["requests"].get(op, 0), r["minimum"].get(op, 0)
                cells.append("" if not have and not need else
                             f"{have} ({need})" if need or op != "delete" else str(have))
            out.append(f"| {r['committer']} | {r['store']} | {r['protocol']} | "
                       + " | ".join(cells) + " |")
    times = report["commit_time"]
    if times:
        t0 = times[0]
        out += ["", f"## 2. Job commit time, {t0['files']} files ({t0['tasks']} tasks), "
                "moto ThreadedMotoServer, Spark protocol", "",
                "| committer | threads | job commit s | speedup | requests | requests/s | "
                "files/s | slowest stage (ms) | task phase s |",
                "|---|---:|---:|---:|---:|---:|---:|---|---:|"]
        for r in times:
            stages = r["stages_ms"]
            top = max(stages, key=lambda k: stages[k]) if stages else ""
            out.append(f"| {r['committer']} | {r['threads']} | {r['commit_seconds']} | "
                       f"{r['speedup_vs_first']} | {r['commit_requests']} | "
                       f"{r['requests_per_second']} | {r['files_per_second']} | "
                       f"{top.removeprefix('job_stage_')} {stages.get(top, '')} | "
                       f"{r['task_phase_seconds']} |")
    mem = report["commit_memory"]
    if mem:
        out += ["", "## 3. Peak memory of a job commit, in-memory store (tracemalloc)", "",
                "| committer | protocol | tasks x files | threads | peak MB | bytes per task | "
                "marginal B per task | marginal B per file | retained MB | "
                "messages held (JSON MB) | traced commit s |",
                "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in mem:
            per_task, per_file = r.get("marginal_bytes_per_task"), r.get("marginal_bytes_per_file")
            out.append(f"| {r['committer']} | {r['protocol']} | {r['tasks']:,} x "
                       f"{r['files_per_task']} | {r['threads']} | {r['peak_bytes'] / 1e6:.2f} | "
                       f"{r['bytes_per_task']:,} | "
                       f"{'' if per_task is None else f'{per_task:,}'} | "
                       f"{'' if per_file is None else f'{per_file:,}'} | "
                       f"{r['retained_bytes'] / 1e6:.2f} | "
                       f"{r['messages_bytes_json'] / 1e6:.2f} | {r['commit_seconds_traced']} |")
    rss = report.get("commit_rss") or []
    if rss:
        r0 = next((r for r in rss if "error" not in r), rss[0])
        out += ["", f"## 4. Peak RSS of a job commit, {r0['tasks'] * r0['files_per_task']:,} "
                f"files over {r0['tasks']:,} tasks, the driver measured alone", "",
                f"Method: {r0.get('method', 'VmHWM of a child process')}.  **peak RSS** is the "
                "figure against the goal (under 200 MB); **before messages** is the driver's "
                "RSS with zerorename imported and the store's client connected, **before** "
                "with the task messages loaded too (Spark's protocol), **increase** the "
                "commit's own (peak minus before).",
                "",
                "| committer | protocol | threads | before messages MB | RSS before MB | "
                "peak RSS MB | increase MB | RSS after MB | commit s | commit requests |",
                "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in rss:
            if "error" in r:
                out.append(f"| {r['committer']} | {r['protocol']} | failed: "
                           f"{r['error'][:100]} |" + " |" * 7)
                continue
            out.append(f"| {r['committer']} | {r['protocol']} | {r['threads']} | "
                       f"{r.get('rss_before_messages_mb', '')} | "
                       f"{r['rss_before_mb']} | {r['peak_rss_mb']} | {r['peak_increase_mb']} | "
                       f"{r['rss_after_mb']} | {r['commit_seconds']} | "
                       f"{r['commit_requests']:,} |")
    return "\n".join(out) + "\n"
