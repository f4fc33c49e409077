"""S3Store PUT/GET throughput on moto (ThreadedMotoServer) and Ceph RGW, at 1 and 8 threads.

Everything runs on 127.0.0.1, with bounded loops (a request count *and* a time cap per phase),
and stops every server it started.  Results go to ``bench/results/store_throughput.json``:
requests/s, latency percentiles, and S3Store's own request counts (the hardware-independent
number; wall times depend on the 2-core machine, where client and server share the CPU).

    python bench/store_throughput.py                 # moto-server + rgw (+ local baseline)
    python bench/store_throughput.py --quick         # fewer requests (CI smoke)
    python bench/store_throughput.py --no-rgw

RGW is started with ``scripts/rgw-start.sh`` (apt-installs it when missing), or taken from
``S3_ENDPOINT`` when ``ZR_RGW_EXTERNAL=1``; when it cannot run, the JSON says why.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "reference"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from servers import MotoServer, radosgw_version, start_rgw, stop_rgw  # noqa: E402

from zerorename.store import Store  # noqa: E402
from zerorename.stores import LocalStore, S3Store, make_s3_client  # noqa: E402

OUT = REPO / "bench" / "results" / "store_throughput.json"
BODY = os.urandom(1024)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run_phase(
    op: Callable[[int], None], n: int, threads: int, cap_s: float
) -> dict[str, Any]:
    """Issue up to ``n`` ops on ``threads`` threads, stopping early after ``cap_s`` seconds."""
    latencies: list[float] = []
    deadline = time.monotonic() + cap_s
    errors = 0

    def one(i: int) -> None:
        nonlocal errors
        if time.monotonic() > deadline:
            return
        t = time.perf_counter()
        try:
            op(i)
        except Exception:
            errors += 1
            return
        latencies.append(time.perf_counter() - t)

    start = time.perf_counter()
    if threads == 1:
        for i in range(n):
            one(i)
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(one, range(n)))
    wall = time.perf_counter() - start
    done = len(latencies)
    return {
        "requests": done,
        "errors": errors,
        "seconds": round(wall, 3),
        "req_per_s": round(done / wall, 1) if wall > 0 else None,
        "p50_ms": round(percentile(latencies, 0.50) * 1000, 2),
        "p95_ms": round(percentile(latencies, 0.95) * 1000, 2),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 2),
        "capped": done + errors < n,
    }


def bench_store(store: Store, base: str, n: int, cap_s: float) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for threads in (1, 8):
        prefix = f"{base}/t{threads}-{uuid.uuid4().hex[:6]}"
        count = n if threads == 1 else 2 * n

        def put_one(i: int, p: str = prefix) -> None:
            store.put(f"{p}/k{i:05d}", BODY)

        put = run_phase(put_one, count, threads, cap_s)
        written = max(int(put["requests"]), 1)

        def get_one(i: int, p: str = prefix, w: int = written) -> None:
            store.get(f"{p}/k{i % w:05d}")

        get = run_phase(get_one, count, threads, cap_s)
        results[f"{threads}_thread{'s' if threads > 1 else ''}"] = {"put": put, "get": get}
    results["request_counts"] = store.request_counts()
    return results


def s3_run(endpoint: str, key: str, secret: str, n: int, cap_s: float) -> dict[str, Any]:
    client = make_s3_client(endpoint, "us-east-1", access_key=key, secret_key=secret)
    bucket = f"zr-bench-{uuid.uuid4().hex[:8]}"
    client.create_bucket(Bucket=bucket)
    store = S3Store(client, name="bench")
    return bench_store(store, f"s3://{bucket}/bench", n, cap_s)


def versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "machine": platform.machine(),
           "cpus": str(os.cpu_count())}
    for mod in ("boto3", "botocore", "moto"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception:  # pragma: no cover
            out[mod] = "?"
    out["radosgw"] = radosgw_version()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="100 requests per phase, 10 s cap")
    ap.add_argument("--no-rgw", action="store_true")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    n, cap = (100, 10.0) if args.quick else (400, 30.0)
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")

    report: dict[str, Any] = {
        "benchmark": "store_throughput",
        "description": "S3Store put/get of 1 KiB objects; 8-thread phases issue 2x requests",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "requests_per_phase": {"1_thread": n, "8_threads": 2 * n},
        "time_cap_s": cap,
        "versions": versions(),
        "load_average_at_start": list(os.getloadavg()),
        "backends": {},
    }
    with MotoServer() as server:
        res = s3_run(server.endpoint(), "testing", "testing", n, cap)
        res["server"] = "ThreadedMotoServer in a child process"
        report["backends"]["moto-server"] = res

    if args.no_rgw:
        report["backends"]["rgw"] = {"skipped": "--no-rgw"}
    else:
        rgw, base, note = start_rgw()
        if rgw is None:
            report["backends"]["rgw"] = {"skipped": note}
        else:
            try:
                res = s3_run(rgw.url, rgw.access_key, rgw.secret_key, n, cap)
                res["server"] = note
                report["backends"]["rgw"] = res
            finally:
                if base is not None:
                    stop_rgw(base)

    with tempfile.TemporaryDirectory() as tmp:
        local = LocalStore(root=tmp)
        report["backends"]["local (baseline)"] = bench_store(local, f"file://{tmp}/bench", n, cap)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    for name, res in report["backends"].items():
        if "skipped" in res:
            print(f"{name:18s} skipped: {res['skipped'][:100]}")
            continue
        for t in ("1_thread", "8_threads"):
            put, get = res[t]["put"], res[t]["get"]
            print(f"{name:18s} {t:9s} put {put['req_per_s']:>7} req/s p50 {put['p50_ms']:>6} ms"
                  f" | get {get['req_per_s']:>7} req/s p50 {get['p50_ms']:>6} ms")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
