"""The command line as a user meets it: help, the model demo, check, trace show/replay, and the
production commands ``uploads`` and ``success``."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from zerorename.cli import main, parse_duration
from zerorename_model.check.properties import PROPERTIES

SUBCOMMANDS = ("demo", "check", "table", "trace", "uploads", "success")


def zr(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zerorename.cli", *args], capture_output=True,
                          text=True, timeout=600)


def test_help_lists_every_subcommand() -> None:
    out = zr("--help")
    assert out.returncode == 0
    for name in SUBCOMMANDS:
        assert name in out.stdout


def test_model_demo_shows_the_lagging_listing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--model-only"]) == 0
    out = capsys.readouterr().out
    assert "missed ['events/part-00000']" in out and "missed []" in out


def test_check_writes_the_matrix_json_and_replayable_traces(tmp_path: Path) -> None:
    out = zr("check", "--target", "model", "--quick", "--committer", "direct",
             "--committer", "directory", "--store", "s3", "--store", "s3-2018",
             "--no-variants", "--protocol", "both",
             "--json", str(tmp_path / "m.json"), "--traces", str(tmp_path / "traces"))
    assert out.returncode == 0, out.stderr
    cells = json.loads((tmp_path / "m.json").read_text())
    assert len(cells) == 2 * 2 * len(PROPERTIES) * 2
    for cell in cells:
        assert set(cell) == {"committer", "store", "property", "protocol", "verdict", "trace",
                             "explored", "variant_of", "bug"}
        assert cell["protocol"] in ("hadoop", "spark") and cell["bug"] is None
        assert cell["verdict"] in ("holds", "violated", "n/a", "vacuous")
        assert (cell["trace"] is not None) == (cell["verdict"] == "violated")
        if cell["verdict"] in ("holds", "vacuous"):  # the reach decides which of the two
            reach = cell["explored"]["reach"].values()
            assert (cell["verdict"] == "vacuous") == (0 in reach), cell
    assert "reach: per property" in out.stdout
    violated = [c for c in cells if c["verdict"] == "violated"]
    assert any(c["committer"] == "direct" and c["property"] == "exclusivity" for c in violated)
    for cell in violated[:4]:
        replay = zr("trace", "replay", cell["trace"])
        assert replay.returncode == 0, replay.stdout[-400:]
        assert "same final state" in replay.stdout
        shown = zr("trace", "show", cell["trace"])
        assert "VIOLATED" in shown.stdout


def test_bad_arguments_get_a_clear_message() -> None:
    out = zr("check", "--committer", "nosuch", "--quick")
    assert out.returncode != 0 and "unknown committer 'nosuch'" in out.stderr
    out = zr("trace", "show", "/nonexistent/trace.jsonl")
    assert out.returncode != 0


def test_durations_parse() -> None:
    assert parse_duration("90s") == 90 and parse_duration("12h") == 43200
    with pytest.raises(Exception, match="bad duration"):
        parse_duration("12 hours")


@pytest.mark.slow
def test_the_quick_matrix_used_by_ci(tmp_path: Path) -> None:
    """The whole quick matrix, as CI runs it: every cell decided, every violation replays."""
    out = zr("check", "--target", "model", "--quick", "--json", str(tmp_path / "m.json"),
             "--traces", str(tmp_path / "traces"))
    assert out.returncode == 0, out.stderr[-2000:]
    cells = json.loads((tmp_path / "m.json").read_text())
    main = [c for c in cells if c["bug"] is None]
    assert len(main) == 11 * 5 * len(PROPERTIES) * 2
    verdicts = {(c["committer"], c["store"], c["property"], c["protocol"]): c["verdict"]
                for c in main}
    # the paper's headline findings, found again by exploration (not typed into the matrix):
    assert verdicts[("magic", "s3-2018", "consistency", "hadoop")] == "violated"
    assert verdicts[("v2", "s3", "abortability", "spark")] == "violated"
    assert verdicts[("direct", "s3", "exclusivity", "spark")] == "violated"
    # directory never reads what the lagging store answers late: no run reaches the state
    # consistency speaks about, so it is vacuous there, not a proof
    assert verdicts[("directory", "s3-2018", "consistency", "spark")] == "vacuous"
    assert verdicts[("magic", "s3", "exclusivity", "hadoop")] == "violated"  # VIII.C
    bugs = {c["bug"] for c in cells} - {None}
    assert {"HADOOP-17258", "HADOOP-17112"} <= bugs
    for cell in [c for c in cells if c["variant_of"] and c["verdict"] == "violated"][:3]:
        assert "same final state" in zr("trace", "replay", cell["trace"]).stdout


def test_check_the_reference_committers(tmp_path: Path) -> None:
    """``--target reference``: the production committers under the same scopes and JSON."""
    out = zr("check", "--target", "reference", "--quick", "--committer", "magic",
             "--store", "s3", "--json", str(tmp_path / "r.json"))
    assert out.returncode == 0, out.stderr[-2000:]
    cells = json.loads((tmp_path / "r.json").read_text())
    assert {c["property"] for c in cells} == set(PROPERTIES)
    assert {c["protocol"] for c in cells} == {"hadoop", "spark"}
    assert all(c["verdict"] in ("holds", "n/a") for c in cells), cells


# -- zerorename uploads / success, on moto in process --------------------------------------------
#
# Cost: ~3 s in all (moto in-process, a few dozen requests per test; the pagination and
# store-age tests use a scripted fake client and send nothing).

HOUR_MS = 3_600_000


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """An in-process moto S3 with one bucket; the CLI's own client reaches it (mock_aws
    intercepts every boto3 client made inside), so commands run exactly as a user's would."""
    import moto.s3.models
    from moto import mock_aws

    import zerorename as zr

    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                        ("AWS_DEFAULT_REGION", "us-east-1")):
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.setattr(moto.s3.models, "S3_UPLOAD_PART_MIN_SIZE", 1)
    with mock_aws():
        client = zr.make_s3_client()
        client.create_bucket(Bucket="bkt")
        yield zr.S3Store(client, retry=zr.RetryPolicy(max_attempts=1))


def _open_task(store: Any, dest: str, job_id: str, rels: Sequence[str],
               clock_millis: int | None = None) -> None:
    """A magic task that wrote ``rels`` and committed, its job not committed: uploads pending,
    recorded in the job's records (intents, .pending, .pendingset)."""
    import zerorename as zr

    opts = {"fs.s3a.committer.threads": "1"}
    if clock_millis is not None:
        opts["zerorename.clock.fixed-millis"] = str(clock_millis)
    job = zr.JobContext(dest, job_id=job_id, options=opts)
    zr.create_committer("magic", store, job).setup_job()
    task = zr.create_committer("magic", store, job, task=job.task(0))
    task.setup_task()
    for rel in rels:
        task.write(rel, b"data")
    task.commit_task()


def _pending(store: Any, prefix: str = "s3://bkt/") -> set[str]:
    return {u.url for u in store.list_multipart_uploads(prefix)}


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_uploads_list_and_abort_are_scoped_to_the_directory(
        s3: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """``out/dataset1`` is a directory: ``out/dataset10`` and ``out/dataset1.bak`` are other
    directories and are never listed or aborted (the classic prefix bug)."""
    for url in ("s3://bkt/out/dataset1/a", "s3://bkt/out/dataset1/x/b",
                "s3://bkt/out/dataset10/c", "s3://bkt/out/dataset1.bak/d"):
        s3.create_multipart(url)
    code, out, err = _run(capsys, "uploads", "list", "s3://bkt/out/dataset1")
    assert code == 0
    listed = {line.split("\t")[0] for line in out.splitlines()}
    assert listed == {"s3://bkt/out/dataset1/a", "s3://bkt/out/dataset1/x/b"}
    assert "source=store" in out and "2 upload(s) under s3://bkt/out/dataset1" in err

    code, _out, err = _run(capsys, "uploads", "abort", "s3://bkt/out/dataset1")
    assert code == 0 and "aborted 2 upload(s)" in err
    assert _pending(s3) == {"s3://bkt/out/dataset10/c", "s3://bkt/out/dataset1.bak/d"}


def test_uploads_abort_dry_run_aborts_nothing(s3: Any,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    for url in ("s3://bkt/out/a", "s3://bkt/out/b"):
        s3.create_multipart(url)
    code, out, err = _run(capsys, "uploads", "abort", "s3://bkt/out", "--dry-run")
    assert code == 0 and "dry run: would abort 2 of the 2 upload(s) listed" in err
    assert len(out.splitlines()) == 2 and "aborted" not in err
    assert _pending(s3) == {"s3://bkt/out/a", "s3://bkt/out/b"}


def test_uploads_job_filter_leaves_other_jobs_alone(s3: Any,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Two jobs writing to one destination, plus a stray upload: ``--job A`` lists and
    aborts exactly A's uploads (found through A's records), never B's or the stray one."""
    dest = "s3://bkt/out"
    _open_task(s3, dest, "job-a", ["a1.csv", "sub/a2.csv"])
    _open_task(s3, dest, "job-b", ["b1.csv"])
    s3.create_multipart("s3://bkt/out/stray.csv")
    code, out, _err = _run(capsys, "uploads", "list", dest, "--job", "job-a")
    assert code == 0
    assert {line.split("\t")[0] for line in out.splitlines()} == {
        "s3://bkt/out/a1.csv", "s3://bkt/out/sub/a2.csv"}
    assert all("source=record" in line for line in out.splitlines())

    code, _out, err = _run(capsys, "uploads", "abort", dest, "--job", "job-a")
    assert code == 0 and "aborted 2 upload(s)" in err
    assert _pending(s3) == {"s3://bkt/out/b1.csv", "s3://bkt/out/stray.csv"}


def _fenced_job(store: Any, dest: str, job_id: str, committed: Sequence[str],
                running: Sequence[str] = ()) -> Any:
    """A fenced job, not committed: one committed task per file of ``committed`` (its uploads
    named in the task's record under ``__fenced_job-<id>/00/tasks/``) and one task attempt
    still writing ``running`` (uploads no record names).  Returns the job committer and the
    task commit messages."""
    import zerorename as zr

    job = zr.JobContext(dest, job_id=job_id, options={"fs.s3a.committer.threads": "1"})
    committer = zr.create_committer("fenced", store, job)
    committer.setup_job()
    messages = []
    for number, rel in enumerate(committed):
        task = zr.create_committer("fenced", store, job, task=job.task(number))
        task.setup_task()
        task.write(rel, b"data")
        messages.append(task.commit_task())
    if running:
        task = zr.create_committer("fenced", store, job, task=job.task(len(committed)))
        task.setup_task()
        for rel in running:
            task.write(rel, b"data")
    return committer, messages


def test_uploads_job_filter_finds_a_fenced_jobs_uploads(
        s3: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """The fenced committer keeps its task records under ``__fenced_job-<id>/`` (no
    ``.pending`` per file): ``--job A`` lists and aborts the uploads A's task records name,
    never another fenced job's, a magic job's or a stray upload; an uncommitted attempt's
    uploads, which no record names, are not attributed to A."""
    dest = "s3://bkt/out"
    _fenced_job(s3, dest, "job-a", ["a1.csv", "sub/a2.csv"], running=["a3.csv"])
    _fenced_job(s3, dest, "job-b", ["b1.csv"])
    _open_task(s3, dest, "job-m", ["m1.csv"])
    s3.create_multipart("s3://bkt/out/stray.csv")
    code, out, _err = _run(capsys, "uploads", "list", dest, "--job", "job-a")
    assert code == 0
    assert {line.split("\t")[0] for line in out.splitlines()} == {
        "s3://bkt/out/a1.csv", "s3://bkt/out/sub/a2.csv"}
    assert all("source=record" in line for line in out.splitlines())

    code, _out, err = _run(capsys, "uploads", "abort", dest, "--job", "job-a")
    assert code == 0 and "aborted 2 upload(s)" in err
    assert _pending(s3) == {"s3://bkt/out/a3.csv", "s3://bkt/out/b1.csv",
                            "s3://bkt/out/m1.csv", "s3://bkt/out/stray.csv"}


def test_uploads_job_filter_finds_a_fenced_jobs_committed_but_incomplete_uploads(
        s3: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A fenced job commit that passed its commit point but could not complete its uploads
    leaves only the commit record (``commit.json``: the task records are gone); its uploads
    are still the job's, and ``--job`` finds them there."""
    from zerorename.errors import JobFailedError, StoreError

    dest = "s3://bkt/out"
    committer, messages = _fenced_job(s3, dest, "job-c", ["c1.csv", "c2.csv"])
    s3.create_multipart("s3://bkt/out/stray.csv")

    def refuse(url: str, *args: Any, **kwargs: Any) -> str:
        raise StoreError(url, "complete refused (test)", code="AccessDenied", status=403)

    with monkeypatch.context() as patch, pytest.raises(JobFailedError, match="is committed"):
        patch.setattr(s3, "complete_multipart", refuse)
        committer.commit_job(messages)
    code, out, _err = _run(capsys, "uploads", "list", dest, "--job", "job-c")
    assert code == 0
    assert {line.split("\t")[0] for line in out.splitlines()} == {
        "s3://bkt/out/c1.csv", "s3://bkt/out/c2.csv"}


def test_uploads_older_than_uses_the_jobs_own_records(
        s3: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """moto reports every upload as initiated in 2010, so ages come from the job's records:
    a job whose records were stamped two hours ago (a fixed clock) is older than 1h but not
    than 3h; a job writing now is older than neither."""
    import time

    dest = "s3://bkt/out"
    two_hours_ago = int(time.time() * 1000) - 2 * HOUR_MS
    _open_task(s3, dest, "old-job", ["old.csv"], clock_millis=two_hours_ago)
    _open_task(s3, dest, "new-job", ["new.csv"])

    def listed(*extra: str) -> list[str]:
        code, out, _err = _run(capsys, "uploads", "list", dest, *extra)
        assert code == 0
        return out.splitlines()

    old = listed("--job", "old-job", "--older-than", "1h")
    assert len(old) == 1 and old[0].startswith("s3://bkt/out/old.csv\t")
    assert "age=2.0h" in old[0] and "source=record" in old[0]
    assert listed("--job", "old-job", "--older-than", "3h") == []
    assert listed("--job", "new-job", "--older-than", "1h") == []
    assert len(listed("--job", "new-job", "--older-than", "0s")) == 1
    code, _out, err = _run(capsys, "uploads", "abort", dest, "--job", "old-job",
                           "--older-than", "90m")
    assert code == 0 and "aborted 1 upload(s)" in err
    assert _pending(s3) == {"s3://bkt/out/new.csv"}


class PagingClient:
    """A strict S3 client for ListMultipartUploads/AbortMultipartUpload: pages of at most
    ``page`` uploads (whatever MaxUploads says), real ``Initiated`` times, markers honoured.
    For what moto cannot do: paginate, and report when an upload was started."""

    def __init__(self, uploads: Sequence[tuple[str, float]], page: int = 2) -> None:
        import datetime as dt
        from types import SimpleNamespace

        self.meta = SimpleNamespace(endpoint_url="http://paging.invalid")
        self.page = page
        self.uploads = [{"Key": key, "UploadId": f"id-{i:03d}",
                         "Initiated": dt.datetime.fromtimestamp(started, tz=dt.UTC)}
                        for i, (key, started) in enumerate(sorted(uploads))]
        self.list_calls = 0
        self.aborted: list[str] = []
        #: prefixes of the object listings (the janitor's look for job roots)
        self.object_lists: list[str] = []

    def list_multipart_uploads(self, Bucket: str, Prefix: str = "",
                               KeyMarker: str = "", UploadIdMarker: str = "",
                               MaxUploads: int = 1000) -> dict[str, Any]:
        assert Bucket == "bkt"
        self.list_calls += 1
        matching = [u for u in self.uploads if str(u["Key"]).startswith(Prefix)
                    and (str(u["Key"]), str(u["UploadId"])) > (KeyMarker, UploadIdMarker)]
        page = matching[: min(self.page, MaxUploads)]
        more = len(matching) > len(page)
        answer: dict[str, Any] = {"Uploads": page, "IsTruncated": more}
        if more:
            answer["NextKeyMarker"] = page[-1]["Key"]
            answer["NextUploadIdMarker"] = page[-1]["UploadId"]
        return answer

    def abort_multipart_upload(self, Bucket: str, Key: str,
                               UploadId: str) -> dict[str, Any]:
        self.uploads = [u for u in self.uploads if u["UploadId"] != UploadId]
        self.aborted.append(Key)
        return {}

    def list_objects_v2(self, Bucket: str, Prefix: str = "", **kwargs: Any) -> dict[str, Any]:
        """No objects: no job root anywhere, so the janitor holds no upload back."""
        assert Bucket == "bkt"
        self.object_lists.append(Prefix)
        return {"Contents": [], "CommonPrefixes": [], "IsTruncated": False, "KeyCount": 0}

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the uploads command should not call {name}")


def test_uploads_paginates_and_uses_the_stores_initiated_times(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Seven uploads in pages of two (four pages), started 1h to 7h ago by the store's clock:
    ``--older-than 4h30m`` is 270m and aborts exactly the three started 5h, 6h, 7h ago — found on
    every page — and nothing outside the directory."""
    import time

    import zerorename as zr
    from zerorename import cli

    now = time.time()
    fake = PagingClient([(f"out/d/f{h}", now - h * 3600) for h in range(1, 8)]
                        + [("out/d0/other", now - 9 * 3600)])
    store = zr.S3Store(fake, retry=zr.RetryPolicy(max_attempts=1),  # type: ignore[arg-type]
                       capabilities=zr.StoreCapabilities())
    monkeypatch.setattr(cli, "_store_for", lambda url, args: store)
    code, out, err = _run(capsys, "uploads", "list", "s3://bkt/out/d")
    assert code == 0 and len(out.splitlines()) == 7 and "source=store" in out
    assert fake.list_calls == 4
    code, out, err = _run(capsys, "uploads", "abort", "s3://bkt/out/d", "--older-than", "270m")
    assert code == 0 and "aborted 3 upload(s)" in err
    assert sorted(fake.aborted) == ["out/d/f5", "out/d/f6", "out/d/f7"]
    assert "out/d/__" in fake.object_lists and "__" in fake.object_lists  # at d, and above
    assert {u["Key"] for u in fake.uploads} == {f"out/d/f{h}" for h in range(1, 5)} | {
        "out/d0/other"}


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["uploads", "list", "s3://bkt/out", "--older-than", "12 hours"], "bad duration"),
        (["uploads", "list", "s3://bkt/out", "--older-than", "-1h"],
         "argument --older-than: expected one argument"),
        (["uploads", "purge", "s3://bkt/out"], "invalid choice: 'purge'"),
        (["uploads", "list"], "the following arguments are required: dest"),
        (["uploads", "list", "s3://bkt/out", "--frobnicate"], "unrecognized arguments"),
        (["success"], "the following arguments are required: dest"),
    ],
)
def test_bad_arguments_exit_non_zero_with_a_clear_message(
        argv: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert says in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["uploads", "list", "bkt/out"], "zerorename: bkt/out: not a URL"),
        (["uploads", "list", "gs://bkt/out"], "gs://bkt/out/: S3Store serves s3:// and s3a://"),
        (["uploads", "abort", "s3://bkt/out", "--job", "../other"],
         "--job ../other: not a job ID"),
        (["uploads", "list", "s3://Bad_Bucket!/out"],
         'zerorename: s3://Bad_Bucket!/out/: list_multipart_uploads refused by the S3 client '
         'before sending: Parameter validation failed: Invalid bucket name "Bad_Bucket!"'),
        (["uploads", "list", "s3://no-such-bucket/out"], "s3://no-such-bucket/out/: "
                                                         "list_multipart_uploads failed: 404"),
    ],
)
def test_bad_destinations_fail_with_the_path_and_reason(
        s3: Any, argv: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    assert says in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_success_summarises_a_committed_job(s3: Any, capsys: pytest.CaptureFixture[str]) -> None:
    import zerorename as zr

    job = zr.JobContext("s3://bkt/out", job_id="summary-job",
                        options={"fs.s3a.committer.threads": "1"})
    driver = zr.create_committer("magic", s3, job)
    driver.setup_job()
    task = zr.create_committer("magic", s3, job, task=job.task(0))
    task.setup_task()
    task.write("year=2024/part-0.csv", b"12345")
    driver.commit_job([task.commit_task()])
    code, out, _err = _run(capsys, "success", "s3://bkt/out")
    assert code == 0
    assert "committer:   magic" in out and "job:         summary-job" in out
    assert "files:       1 committed, 5 bytes" in out
    assert "s3://bkt/out/year=2024/part-0.csv" in out
    code, out, _err = _run(capsys, "success", "s3://bkt/out/", "--json")
    data = json.loads(out)
    assert code == 0 and data["jobId"] == "summary-job" and data["success"] is True


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "s3://bkt/out/_SUCCESS: no _SUCCESS: the job did not commit"),
        (b"", "s3://bkt/out/_SUCCESS: 0-byte _SUCCESS"),
        (b'{"name": "org.apache.hadoop.fs.s3a.commit.files.SuccessData/1", "filen',
         "s3://bkt/out/_SUCCESS: corrupt or truncated JSON"),
        (b'{"name": "something else"}', "s3://bkt/out/_SUCCESS: incompatible file format"),
        (b"\xff\xfe", "s3://bkt/out/_SUCCESS: not UTF-8 text"),
    ],
)
def test_success_on_a_missing_or_corrupt_file_names_the_path(
        s3: Any, content: bytes | None, says: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    if content is not None:
        s3.put("s3://bkt/out/_SUCCESS", content)
    code, out, err = _run(capsys, "success", "s3://bkt/out")
    assert code == 2 and out == ""
    assert err.startswith("zerorename: ") and says in err
    assert "Traceback" not in err


def test_success_on_a_missing_bucket_blames_the_bucket_not_the_job(
        s3: Any, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "success", "s3://missing-bucket/x")
    assert code == 2 and out == ""
    assert "s3://missing-bucket/x/_SUCCESS" in err and "NoSuchBucket" in err
    assert "the job did not commit" not in err
    code, _out, err = _run(capsys, "success", "s3://bkt/never-written")
    assert code == 2 and "no _SUCCESS: the job did not commit" in err


def test_a_success_summary_prints_short(s3: Any) -> None:
    """``print(zr.read_success(...))`` shows what a person asks for (committer, job, files),
    not the dataclass's every field with up to 100 file names and the statistics."""
    import zerorename as zr

    summary = zr.SuccessData(
        committer="magic", job_id="job-7", hostname="worker-1", success=True,
        filenames=[f"s3://bkt/out/year=2024/part-{i:05d}-job-7.parquet" for i in range(100)],
        iostatistics={"counters": {"committer_files_committed": 100,
                                   "committer_bytes_committed": 123456,
                                   **{f"store_op_{i}": i for i in range(60)}}})
    s3.put("s3://bkt/out/_SUCCESS", summary.to_bytes())
    read = zr.read_success(s3, "s3://bkt/out")
    for text in (str(read), repr(read)):
        assert len(text) < 200, text
        assert "magic" in text and "job-7" in text and "100" in text
    assert "\n" not in str(read) and "123456" in str(read)
    assert repr(read).startswith("SuccessData(") and "part-00001" not in repr(read)
    assert read.describe().count("part-") == 100  # the long form is still there, asked for


def test_uploads_list_warns_when_the_stores_initiated_times_are_implausible(
        s3: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """moto reports every upload as initiated on 2010-11-10 (the day S3 introduced multipart
    uploads), which made ``uploads list`` show ``age=140566h`` as if it were true."""
    s3.create_multipart("s3://bkt/out/a")
    code, out, err = _run(capsys, "uploads", "list", "s3://bkt/out")
    assert code == 0 and "source=store" in out
    assert "zerorename: warning:" in err and "implausible" in err and "2010-11-10" in err
    assert "--job" in err


def test_uploads_list_trusts_plausible_initiated_times(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import time

    import zerorename as zr
    from zerorename import cli

    fake = PagingClient([("out/d/f1", time.time() - 3600), ("out/d/f2", time.time() - 60)])
    store = zr.S3Store(fake, retry=zr.RetryPolicy(max_attempts=1),  # type: ignore[arg-type]
                       capabilities=zr.StoreCapabilities())
    monkeypatch.setattr(cli, "_store_for", lambda url, args: store)
    code, out, err = _run(capsys, "uploads", "list", "s3://bkt/out/d")
    assert code == 0 and "age=1.0h" in out and "warning" not in err


def test_implausible_initiated_times() -> None:
    import datetime as dt

    from zerorename.cli import implausible_initiated

    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC).timestamp()
    moto = dt.datetime(2010, 11, 10, 20, 48, 33, tzinfo=dt.UTC).timestamp()
    assert implausible_initiated(moto, now)
    assert implausible_initiated(now + 86400, now)
    assert not implausible_initiated(now - 3 * 365 * 86400, now)  # old, but possible
    assert not implausible_initiated(now + 60, now)  # clock skew


def test_the_cli_and_the_spark_writer_make_the_same_s3_client(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Without ``--checksums`` the CLI's client has the Spark writer's checksum setting (the
    writer's ``checksums`` option unset), so the CLI reads a destination as its job wrote it;
    ``--checksums`` still overrides it."""
    import inspect

    import zerorename.stores
    from zerorename.spark.core import make_store, spec_from_options
    from zerorename.stores import make_s3_client as real

    made: list[str] = []

    def recording(*args: Any, **kwargs: Any) -> Any:
        bound = inspect.signature(real).bind(*args, **kwargs)
        bound.apply_defaults()
        made.append(bound.arguments["checksums"])
        raise RuntimeError("recorded")  # no client needed: only how it was asked for

    monkeypatch.setattr(zerorename.stores, "make_s3_client", recording)
    with pytest.raises(RuntimeError, match="recorded"):
        make_store(spec_from_options({"path": "s3://bkt/out",
                                      "endpoint_url": "http://checksums.invalid"}))
    for argv in (["success", "s3://bkt/out"], ["success", "s3://bkt/out", "--checksums",
                                                "default"]):
        with pytest.raises(RuntimeError, match="recorded"):
            main(argv)
    spark_default, cli_default, cli_override = made
    assert cli_default == spark_default
    assert cli_override == "default"
