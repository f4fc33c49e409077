"""Where one side-by-side job commit's time goes: the request timeline and the stages.

Runs the job of :mod:`side_by_side` (same client, hooks, layout and phases) for each strategy
named, once each, on moto or RGW, and records during the job-commit phase:

* every request's start and end (botocore ``before-call`` / ``after-call``, by operation and
  thread) — so: time before the first complete, completes in flight over time (pool fill),
  time after the last complete, and which requests ran where;
* the process's CPU seconds (``time.process_time``) during the phase;
* a sample of the driver thread's stack every 5 ms (``sys._current_frames``): where the
  thread that runs ``commit_job`` is (waiting on the pool, parsing, ...), by function;
* for zerorename's committers, the duration statistics of their named stages, read back from
  ``_SUCCESS`` (uncounted, after the phase).

    .venv/bin/python bench/commit_trace.py --server moto --files 10000 --threads 32 \\
        --strategies minimal,magic --out /tmp/trace.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "reference"))
sys.path.insert(0, str(HERE))

from buckets import Server  # noqa: E402
from commit_costs import Layout  # noqa: E402
from servers import MotoServer, S3Endpoint, rgw_server  # noqa: E402
from side_by_side import FILE_BYTES, run_phases  # noqa: E402
from strategies import JobTarget, make_strategy  # noqa: E402


class Tracer:
    """Request start/end times while ``on``; attached to the client's event system."""

    def __init__(self) -> None:
        self.on = False
        self.open: dict[tuple[int, int], tuple[str, float]] = {}
        self.requests: list[tuple[str, float, float, int]] = []
        self._lock = threading.Lock()

    def attach(self, client: Any) -> None:
        client.meta.events.register("before-call.s3", self._before)
        client.meta.events.register("after-call.s3", self._after)

    def _before(self, event_name: str = "", context: Any = None, **_: Any) -> None:
        if self.on:
            self.open[(threading.get_ident(), id(context))] = (event_name.rsplit(".", 1)[-1],
                                                              time.perf_counter())

    def _after(self, event_name: str = "", context: Any = None, **_: Any) -> None:
        started = self.open.pop((threading.get_ident(), id(context)), None)
        if started is not None:
            with self._lock:
                self.requests.append((started[0], started[1], time.perf_counter(),
                                      threading.get_ident()))


def thread_ticks() -> dict[int, int]:
    """CPU clock ticks (user + system) of each of this process's threads, by native id."""
    ticks: dict[int, int] = {}
    for entry in os.scandir("/proc/self/task"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            with open(f"/proc/self/task/{entry.name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            ticks[int(entry.name)] = int(fields[11]) + int(fields[12])
    return ticks


class StackSampler:
    """Samples one thread's innermost frames every ``interval`` seconds (``stacks``), and
    every thread's CPU ticks: ``cpu_by_thread`` (seconds, by Python thread name with digits
    dropped; a thread's ticks after the last sample before it ends are not seen)."""

    def __init__(self, ident: int, interval: float = 0.005, stacks: bool = True) -> None:
        self.ident = ident
        self.interval = interval
        self.stacks = stacks
        self.names: dict[int, str] = {}
        self.first: dict[int, int] = {}
        self.last: dict[int, int] = {}
        self.samples: Counter[str] = Counter()
        self.leaf: Counter[str] = Counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _cpu(self) -> None:
        for t in threading.enumerate():
            if t.native_id is not None:
                self.names.setdefault(t.native_id, re.sub(r"[0-9_]+$", "", t.name) or t.name)
        for tid, ticks in thread_ticks().items():
            self.first.setdefault(tid, ticks)
            self.last[tid] = ticks

    def cpu_by_thread(self) -> dict[str, float]:
        hz = os.sysconf("SC_CLK_TCK")
        me = threading.current_thread().native_id
        out: dict[str, float] = {}
        for tid, ticks in self.last.items():
            name = "sampler" if tid == self._thread.native_id else self.names.get(tid, "?")
            if tid == me:
                name = "driver (" + name + ")"
            out[name] = out.get(name, 0.0) + (ticks - self.first[tid]) / hz
        return {k: round(v, 2) for k, v in sorted(out.items(), key=lambda kv: -kv[1])}

    def _run(self) -> None:
        self._cpu()
        ticks = 0
        while not self._stop.wait(self.interval):
            ticks += 1
            if ticks % 20 == 0:
                self._cpu()
            if not self.stacks:
                continue
            frame = sys._current_frames().get(self.ident)
            if frame is None:
                continue
            names: list[str] = []
            f: FrameType | None = frame
            while f is not None and len(names) < 40:
                names.append(f"{Path(f.f_code.co_filename).name}:{f.f_code.co_name}")
                f = f.f_back
            self.leaf[names[0]] += 1
            for n in set(names):  # inclusive: each function once per sample
                self.samples[n] += 1

    def __enter__(self) -> StackSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._cpu()


def timeline(requests: list[tuple[str, float, float, int]], start: float, end: float,
             threads: int) -> dict[str, Any]:
    comps = [r for r in requests if r[0] == "CompleteMultipartUpload"]
    if not comps:
        return {}
    first = min(r[1] for r in comps)
    last = max(r[2] for r in comps)
    busy = sum(r[2] - r[1] for r in comps)
    others = sorted((r for r in requests if r[0] != "CompleteMultipartUpload"),
                    key=lambda r: r[1])
    per_second: list[int] = []
    t = start
    while t < end:
        per_second.append(sum(1 for r in comps if t <= r[2] < t + 1))
        t += 1
    # the pool's fill in 1-second buckets: completes' busy time in the bucket / T
    fill: list[float] = []
    t = start
    while t < end:
        b = sum(max(0.0, min(r[2], t + 1) - max(r[1], t)) for r in comps)
        fill.append(round(b / threads, 2))
        t += 1
    return {
        "before_first_complete_s": round(first - start, 3),
        "completing_s": round(last - first, 3),
        "after_last_complete_s": round(end - last, 3),
        "mean_complete_ms": round(busy / len(comps) * 1000, 1),
        "mean_in_flight": round(busy / (last - first), 2),
        "completes_per_second": per_second,
        "pool_fill_per_second": fill,
        "other_requests": [(op, round(s - start, 3), round(e - start, 3)) for op, s, e, _ in
                           others],
        "threads_used": len({r[3] for r in comps}),
    }


def run(server: Server, tracer: Tracer, name: str, layout: Layout, threads: int,
        slots: int, stacks: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"strategy": name, "files": layout.files, "threads": threads,
                           "server": server.endpoint.name,
                           "when": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
                           "load_average": [round(x, 2) for x in os.getloadavg()]}
    with server.bucket() as bucket:
        target = JobTarget(server.client, bucket, "out", threads)
        strategy = make_strategy(name, target, server.store)
        inner_commit = strategy.commit_job
        sampler = StackSampler(threading.get_ident(), stacks=stacks)
        marks: dict[str, float] = {}

        def traced_commit(messages: Any) -> None:
            tracer.requests.clear()
            tracer.on = True
            marks["cpu0"], marks["start"] = time.process_time(), time.perf_counter()
            marks["main0"] = time.thread_time()
            try:
                with sampler:
                    inner_commit(messages)
            finally:
                marks["end"], marks["cpu1"] = time.perf_counter(), time.process_time()
                marks["main1"] = time.thread_time()
                tracer.on = False

        strategy.commit_job = traced_commit  # type: ignore[method-assign]
        phases = run_phases(strategy, layout, slots, server.counter)
        out["phase_seconds"] = {k: round(v["seconds"], 3) for k, v in phases.items()}
        out["job_commit_requests"] = phases["commit_job"]["requests"]
        out["job_commit_cpu_s"] = round(marks["cpu1"] - marks["cpu0"], 3)
        out["driver_thread_cpu_s"] = round(marks["main1"] - marks["main0"], 3)
        out["cpu_by_thread_s"] = sampler.cpu_by_thread()
        out["timeline"] = timeline(tracer.requests, marks["start"], marks["end"], threads)
        total = sum(sampler.leaf.values()) or 1
        out["driver_samples"] = total
        out["driver_inclusive"] = {k: round(v / total, 3)
                                   for k, v in sampler.samples.most_common(25)}
        out["driver_leaf"] = {k: round(v / total, 3) for k, v in sampler.leaf.most_common(10)}
        if name != "minimal":
            body = server.client.get_object(Bucket=bucket, Key="out/_SUCCESS")["Body"].read()
            with contextlib.suppress(ValueError):
                stats = json.loads(body).get("iostatistics", {})
                means = stats.get("meanstatistics", {})
                out["stages"] = {k: v for k, v in means.items() if k.startswith("job_stage")}
                out["stage_maximums"] = {k: v for k, v in stats.get("maximums", {}).items()
                                         if k.startswith("job_stage")}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", default="moto", choices=("moto", "rgw"))
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--threads", type=int, default=32)
    ap.add_argument("--strategies", default="minimal,magic")
    ap.add_argument("--files-per-task", type=int, default=250)
    ap.add_argument("--slots", type=int, default=4)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--stacks", action="store_true",
                    help="also sample the driver thread's stack every 5 ms (costs CPU)")
    args = ap.parse_args()
    tasks = max(1, args.files // args.files_per_task)
    layout = Layout(tasks, args.files // tasks, size=FILE_BYTES)
    results: list[dict[str, Any]] = []
    with contextlib.ExitStack() as stack:
        if args.server == "moto":
            moto = stack.enter_context(MotoServer())
            endpoint = S3Endpoint("moto", moto.endpoint(), "testing", "testing")
        else:
            got = stack.enter_context(rgw_server())
            if isinstance(got, str):
                raise SystemExit(f"no RGW: {got}")
            endpoint = got
        server = Server(endpoint, args.threads, args.slots)
        tracer = Tracer()
        tracer.attach(server.client)
        for name in args.strategies.split(","):
            row = run(server, tracer, name, layout, args.threads, args.slots, args.stacks)
            results.append(row)
            tl = row["timeline"]
            print(f"{row['when']} {name:12s} job commit {row['phase_seconds']['commit_job']:.2f}"
                  f" s cpu {row['job_commit_cpu_s']:.2f} s (driver thread "
                  f"{row['driver_thread_cpu_s']:.2f})  before first complete "
                  f"{tl.get('before_first_complete_s')} s  after last "
                  f"{tl.get('after_last_complete_s')} s  in flight "
                  f"{tl.get('mean_in_flight')}  mean complete {tl.get('mean_complete_ms')} ms"
                  f"  load {row['load_average'][0]}", flush=True)
            args.out.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
