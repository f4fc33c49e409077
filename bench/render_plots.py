"""The plots of the side-by-side and latency results (``results/*.png``).

Apart from the pages because they need matplotlib (imported only when a plot is drawn, so
that checking the README blocks does not).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from render_common import cells_of, order, rows_at


def plot(report: dict[str, Any], path: Path) -> None:
    """Per server and F: job commit and whole run seconds against T, requests per file."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells = cells_of(report)
    fig, axes = plt.subplots(len(cells), 3, figsize=(16, 4.2 * max(1, len(cells))),
                             squeeze=False)
    for (server, files), ax_row in zip(cells, axes, strict=True):
        rows = [r for r in rows_at(report, server, files) if "error" not in r]
        names = sorted({r["strategy"] for r in rows}, key=order)
        threads = sorted({r["threads"] for r in rows if r["threads"] is not None})
        for key, ax in (("job_commit_seconds", ax_row[0]), ("whole_run_seconds", ax_row[1])):
            for name in names:
                mine = [r for r in rows if r["strategy"] == name]
                style = "--" if name in ("minimal", "rename-v1", "rename-v2", "s3fs") else "-"
                if mine and mine[0]["threads"] is None and threads:  # s3fs: no thread option
                    ax.plot(threads, [mine[0][key]] * len(threads), ":", marker="x", label=name)
                    continue
                ax.plot([r["threads"] for r in mine], [r[key] for r in mine], style,
                        marker="o", label=name)
            ax.set_xscale("log", base=2)
            ax.set_xticks(threads, [str(t) for t in threads])
            ax.set_xlabel("threads (T)")
            ax.set_ylabel("seconds")
            ax.set_title(f"{server}, F = {files:,}: {key.replace('_', ' ')[:-8]}")
            ax.grid(alpha=0.3)
        ax_row[0].legend(fontsize=7)
        top = max(threads) if threads else None
        last = [next((r for r in rows if r["strategy"] == n
                      and r["threads"] in (top, None)), None) for n in names]
        shown = [(n, r) for n, r in zip(names, last, strict=True) if r is not None]
        ax = ax_row[2]
        ax.bar([n for n, _ in shown], [r["requests_per_file"] for _, r in shown])
        ax.set_ylabel("requests per file")
        ax.set_title(f"{server}, F = {files:,}: requests per file")
        ax.tick_params(axis="x", rotation=45)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def latency_plot(report: dict[str, Any], path: Path) -> None:
    """Job commit seconds against T, log-log, with the ⌈F/T⌉·r bound drawn for scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, ax = plt.subplots(figsize=(7, 4.5))
    threads = sorted({r["threads"] for r in report["rows"]})
    for name in sorted({r["committer"] for r in report["rows"]}, key=order):
        mine = [r for r in report["rows"] if r["committer"] == name]
        ax.plot([r["threads"] for r in mine], [r["commit_seconds"] for r in mine], marker="o",
                label=name)
    ax.plot(threads, [math.ceil(report["files"] / t) * report["delay_ms"] / 1000
                      for t in threads], "k--", label="⌈F/T⌉·r")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax.set_xticks(threads, [str(t) for t in threads])
    ax.set_xlabel("threads (T)")
    ax.set_ylabel("job commit seconds")
    ax.set_title(f"F = {report['files']:,}, r = {report['delay_ms']:g} ms per request")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)

