"""Permission faults, real: every committer runs a job (and the stream sink a micro-batch,
without Spark) on an IAM-enforcing moto server with one action of docs/user/operations.md's
policy denied, for each action in turn.

The policy is parsed from the doc (its ``json`` block), so the doc and this test cannot drift.
For each (committer, denied action) the job either fails before anything is visible, or its
failure takes back what it made visible, or it commits (and is reported committed, its
output whole) — never a failed job with visible output — and a failure names the missing IAM
action.  One server per module (``INITIAL_NO_AUTH_ACTION_COUNT`` lifted once the users and the
bucket exist); one IAM user per policy variant.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import moto.s3.models
import pytest
from moto import settings as moto_settings

import zerorename as zr
from zerorename.committers.fenced_records import ConditionalWriteUnsupportedError
from zerorename.committers.layout import FENCED_COMMIT_RECORD
from zerorename.errors import AccessDeniedError, CommitError, CredentialsError, NotFoundError
from zerorename.executor import THREAD_PREFIX
from zerorename.stores.capabilities import clear_probe_cache
from zerorename.stores.fencing import FencingSupport, choose_committer, clear_fencing_cache
from zerorename.stores.s3.errors import IAM_ACTIONS, IamAction
from zerorename.urls import dir_prefix, is_hidden

from .conftest_helpers import options


@pytest.fixture(autouse=True)
def no_committer_threads() -> Iterator[None]:
    """No committer thread outlives its test (the server's request threads may linger)."""
    yield
    leaked = [t.name for t in threading.enumerate() if t.name.startswith(THREAD_PREFIX)]
    assert not leaked, f"committer threads still alive: {leaked}"

OPERATIONS_MD = Path(__file__).resolve().parents[2] / "docs" / "user" / "operations.md"
PREFIX = "warehouse"


def documented_policy() -> dict[str, Any]:
    """The policy of operations.md's "Permissions" (its one ``json`` block naming s3:)."""
    text = OPERATIONS_MD.read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```json\n(.*?)```", text, flags=re.S) if '"s3:' in b]
    assert len(blocks) == 1, "operations.md must hold exactly one IAM policy block"
    policy: dict[str, Any] = json.loads(blocks[0])
    return policy


def policy_actions(policy: dict[str, Any]) -> list[str]:
    return sorted({a for st in policy["Statement"] for a in st["Action"]})


ACTIONS = policy_actions(documented_policy())


def test_policy_names_every_action_the_store_needs() -> None:
    """The doc's policy and the store's table of IAM actions are the same set: an action the
    store needs and the policy lacks (or the reverse) fails here."""
    needed = {str(a) for actions in IAM_ACTIONS.values() for a in actions}
    assert set(ACTIONS) == needed == {str(a) for a in IamAction}


def _policy_for(bucket: str, denied: str | None) -> str:
    text = json.dumps(documented_policy()).replace("BUCKET", bucket).replace("PREFIX", PREFIX)
    policy = json.loads(text)
    for st in policy["Statement"]:
        st["Action"] = [a for a in st["Action"] if a != denied]
        if st["Resource"].endswith("/*"):
            # moto 5 authorises DeleteObjects (one request, many keys) against the bucket's
            # ARN before it checks s3:DeleteObject per key as AWS does; the object actions'
            # statement also names the bucket so that moto lets the per-key check decide
            st["Resource"] = [st["Resource"], f"arn:aws:s3:::{bucket}"]
    policy["Statement"] = [st for st in policy["Statement"] if st["Action"]]
    return json.dumps(policy)


def test_every_s3_operation_has_its_iam_action() -> None:
    """Each operation the S3 store sends (``_call("<op>", …)``) is in the table, so a 403 on
    any of them names the action to add."""
    source = "".join(p.read_text(encoding="utf-8") for p in
                     (Path(zr.__file__).parent / "stores" / "s3").glob("*.py"))
    ops = set(re.findall(r'_call\(\s*"(\w+)"', source))
    assert ops and ops <= set(IAM_ACTIONS), sorted(ops - set(IAM_ACTIONS))


@dataclass
class IamServer:
    endpoint: str
    bucket: str
    admin: Any  # boto3 S3 client allowed everything
    keys: dict[str | None, tuple[str, str]]  # denied action (None: the whole policy) → key

    def store(self, denied: str | None) -> zr.S3Store:
        access, secret = self.keys[denied]
        client = zr.make_s3_client(self.endpoint, "us-east-1", access_key=access,
                                   secret_key=secret)
        return zr.S3Store(client, retry=zr.RetryPolicy(max_attempts=1), min_part_size=64)

    def admin_store(self) -> zr.S3Store:
        return zr.S3Store(self.admin, retry=zr.RetryPolicy(max_attempts=1), min_part_size=64)


@pytest.fixture(scope="module")
def iam_server() -> Iterator[IamServer]:
    from moto.server import ThreadedMotoServer

    saved_count = moto_settings.INITIAL_NO_AUTH_ACTION_COUNT
    saved_min = moto.s3.models.S3_UPLOAD_PART_MIN_SIZE
    moto_settings.INITIAL_NO_AUTH_ACTION_COUNT = float("inf")
    moto.s3.models.S3_UPLOAD_PART_MIN_SIZE = 64  # type: ignore[assignment]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        import boto3

        iam = boto3.client("iam", endpoint_url=endpoint, region_name="us-east-1",
                           aws_access_key_id="testing", aws_secret_access_key="testing")
        bucket = f"zr-iam-{uuid.uuid4().hex[:8]}"
        zr.make_s3_client(endpoint, "us-east-1", access_key="testing",
                          secret_key="testing").create_bucket(Bucket=bucket)

        def user(name: str, policy: str) -> tuple[str, str]:
            iam.create_user(UserName=name)
            iam.put_user_policy(UserName=name, PolicyName="p", PolicyDocument=policy)
            key = iam.create_access_key(UserName=name)["AccessKey"]
            return str(key["AccessKeyId"]), str(key["SecretAccessKey"])

        admin_policy = json.dumps({"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Action": "*", "Resource": "*"}]})
        admin_key = user("admin", admin_policy)
        keys: dict[str | None, tuple[str, str]] = {None: user("full", _policy_for(bucket, None))}
        for action in ACTIONS:
            keys[action] = user(f"no-{action.split(':')[1]}", _policy_for(bucket, action))
        moto_settings.INITIAL_NO_AUTH_ACTION_COUNT = 0  # every request from now on is checked
        admin = zr.make_s3_client(endpoint, "us-east-1", access_key=admin_key[0],
                                  secret_key=admin_key[1])
        yield IamServer(endpoint, bucket, admin, keys)
    finally:
        moto_settings.INITIAL_NO_AUTH_ACTION_COUNT = saved_count
        moto.s3.models.S3_UPLOAD_PART_MIN_SIZE = saved_min
        server.stop()
        clear_fencing_cache()


def _opts(committer: str) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if committer in ("v1", "v2", "manifest"):
        extra["zerorename.fileoutput.rename-by-copy"] = "true"
    return options(**extra)


FILES = {0: {"a/part-00000.csv": b"a,1\n" * 40}, 1: {"part-00001.csv": b"b,2\n" * 3}}
#: v2 publishes each task's files at its task commit (FileOutputCommitter v2: documented
#: unsafe); a failure after a task commit leaves that task's files, as in Hadoop.
PUBLISHES_AT_TASK_COMMIT = {"v2"}


@dataclass
class Outcome:
    error: BaseException | None
    stage: str
    success: Any = None
    abort_error: BaseException | None = None


def _run(committer: str, store: zr.S3Store, dest: str) -> Outcome:
    """A job as Spark drives it: a failed task or job commit is followed by ``abort_job``."""
    job = zr.JobContext(dest, options=_opts(committer))
    stage = "create"
    driver = None
    try:
        driver = zr.create_committer(committer, store, job)
        stage = "setup_job"
        driver.setup_job()
        messages = []
        for task_id, files in FILES.items():
            stage = f"task {task_id}"
            tc = zr.create_committer(committer, store, job, task=job.task(task_id))
            tc.setup_task()
            try:
                for rel, data in files.items():
                    with tc.open(rel) as f:
                        f.write(data)
                messages.append(tc.commit_task())
            except CommitError:
                tc.abort_task()
                raise
        stage = "commit_job"
        return Outcome(None, stage, driver.commit_job(messages))
    except CommitError as exc:
        abort_error = None
        if (driver is not None and stage != "setup_job") or committer == "fenced":
            try:
                if driver is not None:
                    driver.abort_job()
            except CommitError as again:
                abort_error = again
        return Outcome(exc, stage, abort_error=abort_error)


def _visible(server: IamServer, dest: str) -> dict[str, bytes]:
    admin = server.admin_store()
    base = dir_prefix(dest)
    return {o.url[len(base):]: admin.get(o.url) for o in zr.list_dir(admin, dest)
            if not is_hidden(o.url[len(base):])}


def _everything(server: IamServer, dest: str) -> list[str]:
    admin = server.admin_store()
    return sorted(o.url for o in zr.list_dir(admin, dest))


def _names(exc: BaseException, action: str) -> bool:
    """The error (its message, notes and causes) names the IAM action, and is typed so."""
    seen: BaseException | None = exc
    typed = False
    text = ""
    while seen is not None:
        text += str(seen) + " ".join(getattr(seen, "__notes__", []))
        denials = [seen, *getattr(seen, "failures", {}).values()]  # DeleteManyError's keys
        if any(isinstance(d, AccessDeniedError) and action in d.actions for d in denials):
            typed = True
        seen = seen.__cause__ or seen.__context__
    return typed and action in text


EXPECTED = {rel: data for files in FILES.values() for rel, data in files.items()}


def test_the_whole_policy_is_enough(iam_server: IamServer) -> None:
    """The documented policy runs every committer's job to the end."""
    for committer in sorted(zr.COMMITTERS):
        clear_fencing_cache()
        dest = f"s3://{iam_server.bucket}/{PREFIX}/full-{committer}"
        outcome = _run(committer, iam_server.store(None), dest)
        assert outcome.error is None, f"{committer}: {outcome.error}"
        assert _visible(iam_server, dest) == EXPECTED, committer
        assert zr.read_success(iam_server.admin_store(), dest).committer == committer


@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("committer", sorted(zr.COMMITTERS))
def test_one_action_denied(iam_server: IamServer, committer: str, action: str) -> None:
    clear_fencing_cache()
    dest = f"s3://{iam_server.bucket}/{PREFIX}/{committer}-{action.split(':')[1]}-" \
           f"{uuid.uuid4().hex[:6]}"
    outcome = _run(committer, iam_server.store(action), dest)
    visible = _visible(iam_server, dest)
    if outcome.error is None:  # committed: whole, and reported so
        assert outcome.success is not None
        assert visible == EXPECTED, f"{committer} committed without {action}: {sorted(visible)}"
        left = [u for u in _everything(iam_server, dest)
                if not u.endswith(("_SUCCESS", "/" + FENCED_COMMIT_RECORD))  # kept: it fences
                and u[len(dir_prefix(dest)):] not in EXPECTED]
        if left:  # what its cleanup could not remove is said, with the action it lacked
            report = outcome.success.diagnostics.get("cleanup.failure", "")
            assert action in report, (f"{committer} without {action} committed, left {left} "
                                      f"and its _SUCCESS does not say why: {report!r}")
        return
    if committer in PUBLISHES_AT_TASK_COMMIT and outcome.stage != "setup_job":
        visible = {}  # v2 publishes at task commit (documented unsafe: nothing to take back)
    assert visible == {}, (f"{committer} without {action} failed at {outcome.stage} "
                           f"({outcome.error}) and left {sorted(visible)} visible")
    assert _names(outcome.error, action), (
        f"{committer} without {action} failed at {outcome.stage} without naming the "
        f"action: {outcome.error!r}")
    if committer == "fenced" and outcome.stage == "setup_job":
        left = [u for u in _everything(iam_server, dest) if ".zerorename-probe" not in u]
        assert left == [], f"fenced's failed setup_job left {left}"


# -- credentials, HEAD's bodiless 403, conditional writes denied, fenced's strays ------------


@pytest.mark.parametrize("wrong", ["secret", "access key"])
def test_wrong_credentials_say_credentials(iam_server: IamServer, wrong: str) -> None:
    """A wrong secret key or an unknown access key is a CredentialsError that says
    credentials; a HEAD (no body in its 403) says credentials or the action, never a doubled
    ``403 403``."""
    access, secret = iam_server.keys[None]
    if wrong == "secret":
        secret, code = "not-the-secret", "SignatureDoesNotMatch"
    else:
        access, code = "AKIAUNKNOWNKEY000000", "InvalidAccessKeyId"
    client = zr.make_s3_client(iam_server.endpoint, "us-east-1", access_key=access,
                               secret_key=secret)
    store = zr.S3Store(client, retry=zr.RetryPolicy(max_attempts=1), min_part_size=64)
    dest = f"s3://{iam_server.bucket}/{PREFIX}/creds"
    with pytest.raises(CredentialsError) as put:
        store.put(f"{dest}/x", b"x")
    assert put.value.code == code and "credentials" in str(put.value)
    with pytest.raises(AccessDeniedError) as head:
        store.head(f"{dest}/x")
    text = str(head.value)
    assert "403 403" not in text and "403 Forbidden" in text
    assert "credentials" in text and "s3:GetObject" in text


def test_a_denied_head_names_get_object(iam_server: IamServer) -> None:
    store = iam_server.store("s3:GetObject")
    with pytest.raises(AccessDeniedError) as info:
        store.head(f"s3://{iam_server.bucket}/{PREFIX}/nothing-here")
    assert info.value.actions == ("s3:GetObject",)
    assert "403 403" not in str(info.value)


class _NoConditionalWrites(zr.S3Store):
    """A role whose bucket policy denies PUTs carrying If-None-Match (as a policy with a
    condition on ``s3:if-none-match`` does on AWS): such a PUT answers 403."""

    def put(self, url: str, data: bytes, *, if_none_match: bool = False,
            if_match: str | None = None) -> str:
        if if_none_match:
            raise AccessDeniedError(url, "put failed: 403 AccessDenied (conditional writes "
                                    "denied by the bucket policy)", ("s3:PutObject",))
        return super().put(url, data, if_match=if_match)

    def prober(self) -> zr.S3Store:
        return _NoConditionalWrites(self.client, retry=self.retry, name=self.name,
                                    min_part_size=self.min_part_size)


def test_a_policy_denying_conditional_writes_means_magic(iam_server: IamServer) -> None:
    """auto chooses magic; fenced refuses before writing anything, saying why."""
    clear_fencing_cache()
    access, secret = iam_server.keys[None]
    client = zr.make_s3_client(iam_server.endpoint, "us-east-1", access_key=access,
                               secret_key=secret)
    store = _NoConditionalWrites(client, retry=zr.RetryPolicy(max_attempts=1),
                                 min_part_size=64)
    dest = f"s3://{iam_server.bucket}/{PREFIX}/no-conditional"
    choice = choose_committer(store, dest)
    assert choice.committer == "magic"
    assert choice.decision.support is FencingSupport.DENIED
    committer = zr.create_committer("fenced", store, zr.JobContext(dest, options=options()))
    with pytest.raises(ConditionalWriteUnsupportedError, match="denies conditional writes"):
        committer.setup_job()
    assert _everything(iam_server, dest) == []
    clear_fencing_cache()


def test_fenced_logs_each_unrecorded_upload_it_aborts(iam_server: IamServer,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    """Another tool's upload in progress under the destination (``aws s3 cp``) looks like a
    dead task's: fenced's setup aborts it, and says so at WARNING with its key."""
    clear_fencing_cache()
    dest = f"s3://{iam_server.bucket}/{PREFIX}/strays-{uuid.uuid4().hex[:6]}"
    admin = iam_server.admin_store()
    stray = f"{dest}/copied-by-another-tool.bin"
    admin.create_multipart(stray)
    committer = zr.create_committer("fenced", iam_server.store(None),
                                    zr.JobContext(dest, options=options()))
    with caplog.at_level(logging.WARNING, logger="zerorename"):
        committer.setup_job()
    assert admin.list_multipart_uploads(dir_prefix(dest)) == []
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(stray in m and "initiated" in m for m in warned), warned
    committer.abort_job()


# -- the stream sink: its driver/task protocol without Spark, one action denied ---------------


@dataclass
class BatchRun:
    error: BaseException | None
    stage: str
    outcome: Any = None  # commit_batch's BatchOutcome
    abort_error: BaseException | None = None


def _stream_store(server: IamServer, denied: str | None, dest: str) -> zr.S3Store:
    """The store the Spark path builds for ``dest`` (``spark.core.make_store``): its capability
    probe runs in the destination's hidden area, where the documented policy lets it write."""
    from zerorename.stores.probe import PROBE_AREA

    access, secret = server.keys[denied]
    client = zr.make_s3_client(server.endpoint, "us-east-1", access_key=access,
                               secret_key=secret)
    key = dest.split("/", 3)[3]
    return zr.S3Store(client, retry=zr.RetryPolicy(max_attempts=1), min_part_size=64,
                      probe_bucket=server.bucket, probe_prefix=f"{key}/{PROBE_AREA}")


STREAM_ROWS = [{"id": i, "part": i % 2} for i in range(40)]


def _stream_batch(store: zr.S3Store, dest: str, monkeypatch: pytest.MonkeyPatch) -> BatchRun:
    """Batch 0 of a fresh query run as Spark drives it: the driver's writer (``start_writer``),
    two tasks (the fenced task side, ``run_task``), the driver's ``commit_batch``; a failed
    task or commit is followed by ``abort_batch`` (Spark's ``abort``)."""
    pa = pytest.importorskip("pyarrow")
    pytest.importorskip("pyspark")
    from zerorename.spark import core
    from zerorename.spark.spec import WriteSpec
    from zerorename.spark.streaming import abort_batch, batch_spec, commit_batch, start_writer

    monkeypatch.setattr(core, "make_store", lambda spec: store)  # the tasks' store
    clear_fencing_cache()  # a fresh driver: both probes run under this role
    clear_probe_cache()
    run_id = str(uuid.uuid4())
    stage = "start_writer"
    try:
        writer = start_writer(WriteSpec(dest=dest, partition_by=("part",), part_min_size=64),
                              store=store)
        outcomes: list[Any] = []
        for t in range(2):
            stage = f"task {t}"
            table = pa.Table.from_pylist(STREAM_ROWS[t::2])
            outcomes.append(core.run_task(batch_spec(writer, 0, run_id), t, 0,
                                          table.to_batches()))
        stage = "commit_batch"
        return BatchRun(None, stage, commit_batch(writer, 0, outcomes, run_id, store=store))
    except CommitError as exc:
        abort_error = None
        if stage != "start_writer":
            try:
                abort_batch(writer, 0, run_id, store=store)
            except CommitError as again:
                abort_error = again
        return BatchRun(exc, stage, abort_error=abort_error)


def _stream_rows(server: IamServer, dest: str) -> tuple[list[int], list[int]]:
    """Row ids as a plain listing reader sees them, and as a reader of the batch records."""
    import io

    pq = pytest.importorskip("pyarrow.parquet")
    from zerorename.table_log import table_files

    admin = server.admin_store()
    base = dir_prefix(dest)
    listed = [o.url for o in zr.list_dir(admin, dest) if not is_hidden(o.url[len(base):])]

    def ids(urls: list[str]) -> list[int]:
        return sorted(i for u in urls
                      for i in pq.read_table(io.BytesIO(admin.get(u))).column("id").to_pylist())

    try:
        recorded = [f.url for f in table_files(admin, dest)]
    except NotFoundError:  # no batch record at all
        recorded = []
    return ids(listed), ids(recorded)


def test_the_whole_policy_is_enough_for_the_stream_sink(
        iam_server: IamServer, monkeypatch: pytest.MonkeyPatch) -> None:
    dest = f"s3://{iam_server.bucket}/{PREFIX}/stream-full"
    run = _stream_batch(_stream_store(iam_server, None, dest), dest, monkeypatch)
    assert run.error is None, f"{run.stage}: {run.error!r}"
    want = sorted(r["id"] for r in STREAM_ROWS)
    assert _stream_rows(iam_server, dest) == (want, want)
    assert iam_server.admin_store().list_multipart_uploads(dir_prefix(dest)) == []


@pytest.mark.parametrize("action", ACTIONS)
def test_one_action_denied_to_the_stream_sink(iam_server: IamServer, action: str,
                                              monkeypatch: pytest.MonkeyPatch,
                                              caplog: pytest.LogCaptureFixture) -> None:
    """Never a failed batch with rows visible; a committed batch is whole (what its cleanup
    left is logged with the action); a failure names the action."""
    from zerorename.spark.streaming import BatchOutcome

    dest = f"s3://{iam_server.bucket}/{PREFIX}/stream-{action.split(':')[1]}-" \
           f"{uuid.uuid4().hex[:6]}"
    with caplog.at_level(logging.WARNING, logger="zerorename"):
        run = _stream_batch(_stream_store(iam_server, action, dest), dest, monkeypatch)
    listed, recorded = _stream_rows(iam_server, dest)
    if run.error is None:
        want = sorted(r["id"] for r in STREAM_ROWS)
        assert run.outcome is BatchOutcome.COMMITTED
        assert (listed, recorded) == (want, want), f"committed without {action}, not whole"
        base = dir_prefix(dest)
        left = [u for u in _everything(iam_server, dest) if is_hidden(u[len(base):])]
        left += [u.url for u in iam_server.admin_store().list_multipart_uploads(base)]
        # the log is the table's; the capability probe's litter is its own (it never raises)
        left = [u for u in left
                if not u[len(base):].startswith(("_zerorename_log/", ".zerorename-probe/"))]
        if left:
            warned = " ".join(r.getMessage() for r in caplog.records
                              if r.levelno >= logging.WARNING)
            assert action in warned, f"committed without {action}, left {left} unsaid"
        return
    assert (listed, recorded) == ([], []), (
        f"the batch without {action} failed at {run.stage} ({run.error!r}) and left rows "
        f"visible: {len(listed)} listed, {len(recorded)} recorded")
    assert _names(run.error, action), (
        f"the batch without {action} failed at {run.stage} without naming the action: "
        f"{run.error!r}")
