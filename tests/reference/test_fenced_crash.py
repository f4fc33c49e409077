"""The fenced committer under crashes: every request of task and job commit is a crash point,
and real processes die (``kill -9``) or keep running after the driver gave up on them.

* In process: the store "dies" before the n-th request of ``commit_task`` / ``commit_job``
  (:class:`CrashAt`), for every n; then the task is rerun, or the job aborted, or a new job
  attempt rolls forward or back.  The result is exact and no upload is left.
* A driver process is killed with SIGKILL just before, or just after, each request of
  ``commit_job`` (a child Python process against a ThreadedMotoServer on 127.0.0.1); a new job
  attempt then rolls forward (the commit record was saved) or back, to an exact result.
* Hadoop's protocol, two processes: an attempt partitioned from its driver commits late, after
  another attempt of its task committed and the job was committed; it is refused, names the
  winner and aborts its upload.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import zerorename as zr
from zerorename.committers.fenced_records import (
    JobAlreadyCommittedError,
    TaskCommittedByOtherAttemptError,
)
from zerorename.store import Store

from .conftest_helpers import Env, FaultyStore, SimulatedCrash, options

REPO = Path(__file__).resolve().parents[2]
FILES = {0: {"a/x.csv": b"x0"}, 1: {"y.csv": b"y1"}}


class CrashAt(FaultyStore):
    """Dies before its ``n``-th request (of any kind) once armed; counts requests while armed."""

    def __init__(self, inner: Store) -> None:
        super().__init__(inner)
        self.armed = False
        self.seen = 0
        self.die_at: int | None = None

    def _enter(self, op: str, url: str) -> None:
        if self.armed and not self.dead:
            self.seen += 1
            if self.die_at is not None and self.seen >= self.die_at:
                self.dead = True
        super()._enter(op, url)


def data_of(files: dict[int, dict[str, bytes]], tag: bytes) -> dict[int, dict[str, bytes]]:
    return {t: {rel: data + tag for rel, data in fs.items()} for t, fs in files.items()}


def flat(files: dict[int, dict[str, bytes]]) -> dict[str, bytes]:
    return {rel: data for fs in files.values() for rel, data in fs.items()}


def write_task(store: Store, job: zr.JobContext, task_id: int, attempt: int,
               files: dict[str, bytes]) -> Any:
    tc = zr.create_committer("fenced", store, job, task=job.task(task_id, attempt))
    tc.setup_task()
    for rel, data in files.items():
        tc.write(rel, data)
    return tc


def requests_of(action: Callable[[CrashAt], None], env: Env) -> int:
    """How many requests ``action`` makes on a fresh destination (no crash)."""
    probe = CrashAt(env.store)
    action(probe)
    return probe.seen


# -- task commit ------------------------------------------------------------------------------


@pytest.mark.parametrize("after", ["rerun", "abort"])
def test_every_crash_point_of_task_commit(env: Env, after: str) -> None:
    def scenario(store: CrashAt, dest: str) -> tuple[zr.JobContext, Any, list[Any]]:
        job = zr.JobContext(dest, options=options())
        driver = zr.create_committer("fenced", env.store, job)
        driver.setup_job()
        messages = [write_task(env.store, job, 1, 0, FILES[1]).commit_task()]
        dying = write_task(store, job, 0, 0, FILES[0])
        store.armed = True
        with contextlib.suppress(SimulatedCrash):
            messages.append(dying.commit_task())
        return job, driver, messages

    def count_only(store: CrashAt) -> None:
        scenario(store, env.dest("count"))

    count = requests_of(count_only, env)
    assert count == 2  # the record PUT and the GET of the commit record
    for n in range(1, count + 1):
        dest = env.dest(f"task-crash-{after}-{n}")
        store = CrashAt(env.store)
        store.die_at = n
        job, driver, messages = scenario(store, dest)
        assert store.dead and len(messages) == 1
        if after == "rerun":
            retry = write_task(env.store, job, 0, 1, data_of(FILES, b"!")[0])
            try:
                messages.append(retry.commit_task())
                expected = {**data_of(FILES, b"!")[0], **FILES[1]}
            except TaskCommittedByOtherAttemptError as lost:
                # the crashed attempt's record had landed: the task is committed, by it
                assert lost.winner == job.task(0, 0).attempt_id and lost.message is not None
                messages.append(lost.message)
                expected = flat(FILES)
            driver.commit_job(messages)
            assert env.output(dest) == expected, n
        else:
            driver.abort_job()
            assert env.objects(dest) == {}, n
        assert env.uploads(dest) == [], n


# -- job commit, in process -------------------------------------------------------------------


def committed_job(env: Env, dest: str, store: Store, job_id: str
                  ) -> tuple[zr.JobContext, Any, list[Any]]:
    job = zr.JobContext(dest, job_id=job_id, options=options())
    driver = zr.create_committer("fenced", store, job)
    driver.setup_job()
    messages = [write_task(env.store, job, t, 0, fs).commit_task() for t, fs in FILES.items()]
    return job, driver, messages


@pytest.mark.parametrize("protocol", ["spark", "hadoop"])
def test_every_crash_point_of_job_commit_then_a_new_attempt(env: Env, protocol: str) -> None:
    """Before the commit record is saved, the new attempt rolls back and reruns the tasks;
    from then on it rolls forward, whatever was completed.  Before the commit point an
    abort_job of the old attempt's driver instead leaves nothing."""
    def commit(store: CrashAt, dest: str) -> None:
        _job, driver, messages = committed_job(env, dest, store, "count")
        store.armed = True
        driver.commit_job(messages if protocol == "spark" else None)

    count = requests_of(lambda s: commit(s, env.dest("count")), env)
    # + 9: O(1) per job, the check's LIST of the job's keys (before the commit point) included
    assert len(flat(FILES)) <= count <= len(flat(FILES)) + 9
    rolled_forward = 0
    for n in range(1, count + 1):
        dest = env.dest(f"job-crash-{n}")
        store = CrashAt(env.store)
        store.die_at = n
        job_id = f"job-{n}-{uuid.uuid4().hex[:6]}"
        _job, driver, messages = committed_job(env, dest, store, job_id)
        store.armed = True
        with pytest.raises(SimulatedCrash):
            driver.commit_job(messages if protocol == "spark" else None)
        record_saved = env.store.head(f"{dest}/__fenced_job-{job_id}/commit.json") is not None
        job1 = zr.JobContext(dest, job_id=job_id, attempt=1, options=options())
        driver1 = zr.create_committer("fenced", env.store, job1)
        if record_saved:
            with pytest.raises(JobAlreadyCommittedError) as done:
                driver1.setup_job()
            assert env.output(dest) == flat(FILES), n
            assert [f.url for f in zr.committed_files(env.store, dest)] == \
                sorted(f"{dest}/{rel}" for rel in flat(FILES))
            assert done.value.success.committer == "fenced"
            rolled_forward += 1
        else:
            driver1.setup_job()
            assert env.uploads(dest) == [], n  # rolled back
            rerun = data_of(FILES, b"@1")
            msgs = [write_task(env.store, job1, t, 0, fs).commit_task() for t, fs in rerun.items()]
            driver1.commit_job(msgs if protocol == "spark" else None)
            assert env.output(dest) == flat(rerun), n
        assert env.uploads(dest) == [], n
        assert [k for k in env.objects(dest) if k not in env.output(dest)] == \
            ["_SUCCESS", f"__fenced_job-{job_id}/commit.json"], n
    assert 0 < rolled_forward < count  # both sides of the commit point were crashed on


def test_crash_before_the_commit_point_then_abort_leaves_nothing(env: Env) -> None:
    def commit(store: CrashAt, dest: str) -> None:
        _job, driver, messages = committed_job(env, dest, store, "count")
        store.armed = True
        driver.commit_job(messages)

    count = requests_of(lambda s: commit(s, env.dest("count")), env)
    for n in range(1, count + 1):
        dest = env.dest(f"abort-{n}")
        store = CrashAt(env.store)
        store.die_at = n
        job_id = f"job-{n}"
        job, driver, messages = committed_job(env, dest, store, job_id)
        store.armed = True
        with pytest.raises(SimulatedCrash):
            driver.commit_job(messages)
        if env.store.head(f"{dest}/__fenced_job-{job_id}/commit.json") is not None:
            break  # from the commit point on, the job is committed: see the test above
        zr.create_committer("fenced", env.store, job).abort_job()
        assert env.objects(dest) == {}, n
        assert env.uploads(dest) == [], n
    else:
        pytest.fail("the commit record was never saved")


def test_a_lost_answer_to_the_task_record_put_is_recognised(env: Env) -> None:
    """The record PUT lands but its answer is lost (a 503 after the write); the retry meets
    412, reads the record, finds its own bytes: committed, once."""
    class LosesFirstPutAnswer(FaultyStore):
        lost = False

        def put(self, url: str, data: bytes, *, if_none_match: bool = False,
                if_match: str | None = None) -> str:
            etag = self.inner.put(url, data, if_none_match=if_none_match, if_match=if_match)
            if url.endswith(".pendingset") and not self.lost:
                self.lost = True
                raise zr.ThrottledError(url, "answer lost")
            return etag

    dest = env.dest()
    store = LosesFirstPutAnswer(env.store)
    job = zr.JobContext(dest, options=options())
    driver = zr.create_committer("fenced", env.store, job)
    driver.setup_job()
    message = write_task(store, job, 0, 0, FILES[0]).commit_task()
    assert store.lost
    driver.commit_job([message])
    assert env.output(dest) == FILES[0]


# -- real processes ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def moto_endpoint() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def server_store(endpoint: str) -> Store:
    client = zr.make_s3_client(endpoint, "us-east-1", access_key="testing",
                               secret_key="testing")
    return zr.S3Store(client, retry=zr.RetryPolicy(max_attempts=1),
                      capabilities=zr.StoreCapabilities(conditional_put=True))


def fresh_dest(endpoint: str) -> str:
    bucket = f"zr-{uuid.uuid4().hex[:12]}"
    zr.make_s3_client(endpoint, "us-east-1", access_key="testing",
                      secret_key="testing").create_bucket(Bucket=bucket)
    return f"s3://{bucket}/out"


#: The child: a job committer that SIGKILLs its own process just before (``before``) or just
#: after (``after``) the n-th request of commit_job.
DRIVER_CHILD = textwrap.dedent('''
    import json, os, signal, sys
    import zerorename as zr
    endpoint, dest, job_id, n, when, messages = sys.argv[1:7]
    n = int(n)
    client = zr.make_s3_client(endpoint, "us-east-1", access_key="testing",
                               secret_key="testing")
    inner = zr.S3Store(client, retry=zr.RetryPolicy(max_attempts=1),
                       capabilities=zr.StoreCapabilities(conditional_put=True))
    seen = [0]

    class Killing:
        name = inner.name
        def __getattr__(self, op):
            method = getattr(inner, op)
            if op in ("capabilities", "request_counts"):
                return method
            def call(*args, **kwargs):
                seen[0] += 1
                if when == "before" and seen[0] == n:
                    os.kill(os.getpid(), signal.SIGKILL)
                result = method(*args, **kwargs)
                if when == "after" and seen[0] == n:
                    os.kill(os.getpid(), signal.SIGKILL)
                return result
            return call

    opts = {"fs.s3a.retry.interval": "0", "fs.s3a.committer.threads": "1"}
    job = zr.JobContext(dest, job_id=job_id, options=opts)
    driver = zr.create_committer("fenced", Killing(), job)
    driver.commit_job(json.loads(open(messages).read()))
    print(json.dumps({"requests": seen[0]}))
''')


def run_driver_child(endpoint: str, dest: str, job_id: str, n: int, when: str,
                     messages: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO / "reference"), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", DRIVER_CHILD, endpoint, dest, job_id, str(n),
                           when, str(messages)], capture_output=True, text=True, env=env,
                          timeout=120, check=False)


def test_kill_9_of_the_driver_at_every_request_of_commit_job(moto_endpoint: str,
                                                             tmp_path: Path) -> None:
    store = server_store(moto_endpoint)

    def prepare(dest: str, job_id: str) -> Path:
        job = zr.JobContext(dest, job_id=job_id, options=options())
        zr.create_committer("fenced", store, job).setup_job()
        messages = [write_task(store, job, t, 0, fs).commit_task().to_json()
                    for t, fs in FILES.items()]
        path = tmp_path / f"{job_id}.json"
        path.write_text(json.dumps(messages))
        return path

    dest = fresh_dest(moto_endpoint)
    full = run_driver_child(moto_endpoint, dest, "count", 0, "never", prepare(dest, "count"))
    assert full.returncode == 0, full.stderr
    count = json.loads(full.stdout)["requests"]
    assert len(flat(FILES)) <= count <= len(flat(FILES)) + 8
    outcomes: list[str] = []
    for when in ("before", "after"):
        for n in range(1, count + 1):
            dest = fresh_dest(moto_endpoint)
            job_id = f"job-{when}-{n}"
            child = run_driver_child(moto_endpoint, dest, job_id, n, when,
                                     prepare(dest, job_id))
            assert child.returncode == -signal.SIGKILL, (when, n, child.stderr)
            job1 = zr.JobContext(dest, job_id=job_id, attempt=1, options=options())
            driver1 = zr.create_committer("fenced", store, job1)
            try:
                driver1.setup_job()
            except JobAlreadyCommittedError:
                outcomes.append("forward")
                expected = flat(FILES)
            else:
                outcomes.append("back")
                rerun = data_of(FILES, b"@1")
                msgs = [write_task(store, job1, t, 0, fs).commit_task()
                        for t, fs in rerun.items()]
                driver1.commit_job(msgs)
                expected = flat(rerun)
            visible = {o.url[len(dest) + 1:]: store.get(o.url) for o in zr.list_dir(store, dest)
                       if not o.url[len(dest) + 1:].startswith("_")}
            assert visible == expected, (when, n)
            assert store.list_multipart_uploads(dest + "/") == [], (when, n)
            assert [f.url for f in zr.committed_files(store, dest)] == \
                sorted(f"{dest}/{rel}" for rel in expected)
    assert "forward" in outcomes and "back" in outcomes


#: The partitioned task attempt: writes its file, waits for the "partition" to end (a file
#: appears), then commits late; prints what happened.
TASK_CHILD = textwrap.dedent('''
    import json, os, sys, time
    import zerorename as zr
    from zerorename.committers.fenced_records import (
        TaskCommittedByOtherAttemptError, TaskFencedError)
    endpoint, dest, job_id, go = sys.argv[1:5]
    client = zr.make_s3_client(endpoint, "us-east-1", access_key="testing",
                               secret_key="testing")
    store = zr.S3Store(client, retry=zr.RetryPolicy(max_attempts=1),
                       capabilities=zr.StoreCapabilities(conditional_put=True))
    opts = {"fs.s3a.retry.interval": "0"}
    job = zr.JobContext(dest, job_id=job_id, options=opts)
    tc = zr.create_committer("fenced", store, job, task=job.task(0, 0))
    tc.setup_task()
    tc.write("a/x.csv", b"zombie")
    print(json.dumps({"written": True}), flush=True)
    while not os.path.exists(go):
        time.sleep(0.05)
    try:
        tc.commit_task()
        print(json.dumps({"outcome": "committed"}), flush=True)
    except TaskCommittedByOtherAttemptError as exc:
        print(json.dumps({"outcome": "refused", "winner": exc.winner}), flush=True)
    except TaskFencedError:
        print(json.dumps({"outcome": "fenced"}), flush=True)
''')


@pytest.mark.parametrize("late", ["before-job-commit", "after-job-commit"])
def test_late_task_commit_of_a_partitioned_attempt_is_refused_under_hadoops_protocol(
        moto_endpoint: str, tmp_path: Path, late: str) -> None:
    """Attempt 0 of task 0 runs in its own process and is cut off from the driver after
    writing; attempt 1 commits the task.  Attempt 0 then commits: before the job commit it
    meets attempt 1's record (412) and names it; after it, the job's cleanup has removed the
    task records, its PUT lands, and the commit record, which does not name it, fences it.
    Either way its upload is aborted and the output is attempt 1's."""
    store = server_store(moto_endpoint)
    dest = fresh_dest(moto_endpoint)
    job_id = f"hadoop-partition-{late}"
    job = zr.JobContext(dest, job_id=job_id, options=options())
    driver = zr.create_committer("fenced", store, job)
    driver.setup_job()
    go = tmp_path / "partition-ends"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO / "reference"), os.environ.get("PYTHONPATH", "")])}
    zombie = subprocess.Popen([sys.executable, "-c", TASK_CHILD, moto_endpoint, dest, job_id,
                               str(go)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env)
    try:
        assert zombie.stdout is not None
        assert json.loads(zombie.stdout.readline()) == {"written": True}
        # the driver gives up on attempt 0 of task 0: attempt 1 runs and commits, and the job
        for task_id, attempt in ((0, 1), (1, 0)):
            write_task(store, job, task_id, attempt, FILES[task_id]).commit_task()
        if late == "before-job-commit":
            go.write_text("now")  # the partition ends: the zombie commits late
            out, err = zombie.communicate(timeout=120)
        driver.commit_job(None)  # Hadoop: the committed tasks are found in the store
        committed = {o.url[len(dest) + 1:]: store.get(o.url) for o in zr.list_dir(store, dest)
                     if not o.url[len(dest) + 1:].startswith("_")}
        assert committed == flat(FILES)
        if late == "after-job-commit":
            go.write_text("now")
            out, err = zombie.communicate(timeout=120)
    finally:
        if zombie.poll() is None:
            zombie.kill()
    assert zombie.returncode == 0, err
    expected = ({"outcome": "refused", "winner": job.task(0, 1).attempt_id}
                if late == "before-job-commit" else {"outcome": "fenced"})
    assert json.loads(out.strip().splitlines()[-1]) == expected
    after = {o.url[len(dest) + 1:]: store.get(o.url) for o in zr.list_dir(store, dest)
             if not o.url[len(dest) + 1:].startswith("_")}
    assert after == flat(FILES)
    assert store.list_multipart_uploads(dest + "/") == []
    hidden = sorted(o.url[len(dest) + 1:] for o in zr.list_dir(store, dest)
                    if o.url[len(dest) + 1:].startswith("_"))
    assert hidden == ["_SUCCESS", f"__fenced_job-{job_id}/commit.json"]
