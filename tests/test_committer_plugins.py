"""Committers and stores of the user's (issue 47): ``check --committer module:Class`` and
entry points, witnesses that replay, the pytest plugin, and ``check --prefix`` on a store of
the user's under a throw-away area that is removed (moto server; Ceph RGW, marked ``rgw``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import zerorename as zr
from tests.rgw_plugin import RGWServer, rgw_server
from zerorename.cli import main
from zerorename_bridge import plugins, user_store
from zerorename_bridge.statemachine import check_machine, make_machine

ROOT = Path(__file__).resolve().parents[1]
EAGER = "tests.plugin_committers:PublishingAtTaskCommit"
__fixtures__ = (rgw_server,)


def _check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["check", "--target", "reference", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_jvm_committer_is_refused_with_a_clear_message(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = _check(capsys, "--committer", "hadoop:org.example.MyCommitter",
                             "--quick")
    assert code == 2
    assert "hadoop:org.example.MyCommitter: JVM committers" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(("name", "words"), [
    ("no-such-committer", "unknown committer 'no-such-committer' (--target reference)"),
    ("tests.no_such_module:Committer", "cannot import module 'tests.no_such_module'"),
    ("tests.plugin_committers:Missing", "has no 'Missing'"),
    ("tests.plugin_committers:NoContract", "lacks setup_task, open"),
    ("tests.plugin_committers:Undeclared", "does not declare visible_before_job_commit"),
])
def test_a_name_that_is_no_committer_is_refused_before_exploring(
        capsys: pytest.CaptureFixture[str], name: str, words: str) -> None:
    code, _out, err = _check(capsys, "--committer", name, "--quick")
    assert code == 2
    assert f"zerorename: {name}: " in err and words in err, err
    with pytest.raises(plugins.PluginCommitterError):
        plugins.reference_factory(name)


def test_a_reference_class_given_to_the_model_target_is_refused() -> None:
    with pytest.raises(plugins.PluginCommitterError, match="does not declare takes_messages"):
        plugins.model_factory(EAGER)


def test_a_committer_class_of_the_users_is_checked_and_its_witness_replays(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Under both protocols: the class that publishes at task commit breaks abortability, the
    witness (marked a reference committer's) replays to the same final state."""
    code, out, _err = _check(capsys, "--committer", EAGER, "--store", "s3", "--quick",
                             "--property", "abortability", "--traces", str(tmp_path))
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith(EAGER))
    assert row.split()[-1] == "VIOL/VIOL", out
    witnesses = sorted(tmp_path.glob("*.jsonl"))
    assert [w.name for w in witnesses] == [f"{EAGER}.s3.abortability.{p}.jsonl"
                                           for p in ("hadoop", "spark")]
    header = json.loads(witnesses[0].read_text().splitlines()[0])
    assert header["target"] == "reference"
    assert header["scenario"]["committer"] == EAGER
    assert main(["trace", "replay", str(witnesses[0])]) == 0
    assert "replay: same final state" in capsys.readouterr().out


def test_the_state_machine_writes_a_witness_that_replays(tmp_path: Path) -> None:
    """The per-step invariant sees the published file; the shrunk run's trace replays."""
    machine = make_machine(EAGER, "s3", plugins.reference_factory(EAGER),
                           ["abortability"], witnesses=str(tmp_path),
                           header={"target": "reference"})
    with pytest.raises(AssertionError, match="violates nothing published before job commit"):
        check_machine(machine, examples=30, shrink=False)
    (witness,) = tmp_path.glob("*.jsonl")
    replayed = plugins.replay_any(str(witness))
    assert replayed.same, (replayed.recorded_digest, replayed.replayed_digest)


def test_the_pytest_plugins_acceptance_scenarios_tell_the_flaw(tmp_path: Path) -> None:
    from zerorename_bridge.pytest_plugin import CommitterCheck

    check = CommitterCheck(tmp_path)
    check.acceptance("fenced")
    with pytest.raises(AssertionError, match="output visible after task commit"):
        check.acceptance(EAGER)


# -- a store of the user's ------------------------------------------------------------------


def test_a_rebased_store_refuses_urls_outside_the_scenarios_bucket() -> None:
    store = user_store.RebasedStore(zr.LocalStore(), "file:///nowhere/area")
    with pytest.raises(user_store.AreaEscapeError, match="outside s3://bucket/"):
        store.put("s3://other/key", b"x")
    assert store._in("s3://bucket/out/a") == "file:///nowhere/area/out/a"


@pytest.fixture
def moto_endpoint() -> Iterator[tuple[str, Any, str]]:
    """A ThreadedMotoServer with a fresh bucket (moto's state is process-wide: a bucket of
    its own per test); its endpoint, a client and the bucket."""
    os.environ.setdefault("S3_UPLOAD_PART_MIN_SIZE", "1")
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        client = zr.make_s3_client(endpoint_url=endpoint, region="us-east-1")
        bucket = f"users-{uuid.uuid4().hex[:12]}"
        client.create_bucket(Bucket=bucket)
        yield endpoint, client, bucket
    finally:
        server.stop()


def _keys(client: Any, bucket: str) -> list[str]:
    objects = client.list_objects_v2(Bucket=bucket).get("Contents", [])
    uploads = client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])
    return [o["Key"] for o in objects] + [f"upload {u['Key']}" for u in uploads]


def _on_users_store(endpoint: str, bucket: str, prefix: str, committer: str,
                    **kwargs: Any) -> list[Any]:
    from zerorename.stores.probe import ProbeSettings

    config = user_store.UserStore(f"s3://{bucket}/{prefix}", endpoint)
    return user_store.user_matrix(config, [committer], ["abortability"], quick=True,
                                  traces=None, protocols=("spark",),
                                  probe_settings=ProbeSettings(racers=2, rounds=1), **kwargs)


def test_a_prefix_that_holds_data_is_refused(moto_endpoint: tuple[str, Any, str]) -> None:
    endpoint, client, bucket = moto_endpoint
    client.put_object(Bucket=bucket, Key="tables/t1/part-0", Body=b"data")
    with pytest.raises(user_store.PrefixNotEmptyError, match=f"s3://{bucket}/tables: holds"):
        _on_users_store(endpoint, bucket, "tables", "fenced")
    assert _keys(client, bucket) == ["tables/t1/part-0"]


@pytest.mark.slow
def test_check_on_a_users_store_finds_the_flaw_and_leaves_nothing(
        moto_endpoint: tuple[str, Any, str], capsys: pytest.CaptureFixture[str]) -> None:
    """The probe and the scenarios (crashes, partitions, lost answers, client-side) on a moto
    server: the flaw is found there too, and the throw-away area is gone afterwards, beside
    the user's own data (in another prefix) untouched."""
    endpoint, client, bucket = moto_endpoint
    client.put_object(Bucket=bucket, Key="tables/keep", Body=b"mine")
    cells = _on_users_store(endpoint, bucket, "zr-check", EAGER)
    assert [(c.store, c.verdict.value) for c in cells] == [("user", "violated")]
    assert "committers on this store" in capsys.readouterr().out  # the probe's report
    assert _keys(client, bucket) == ["tables/keep"]


def test_the_area_is_removed_when_the_check_fails(moto_endpoint: tuple[str, Any, str]) -> None:
    endpoint, client, bucket = moto_endpoint
    config = user_store.UserStore(f"s3://{bucket}/zr", endpoint)
    with pytest.raises(KeyboardInterrupt), user_store.throwaway_area(config) as made:
        assert made.area is not None and made.area.startswith(f"s3://{bucket}/zr/")
        backend = user_store.user_backend()
        backend.put("s3://bucket/out/part-0", b"x")
        backend.create_multipart("s3://bucket/out/part-1")
        assert len(_keys(client, bucket)) == 2
        raise KeyboardInterrupt
    assert _keys(client, bucket) == []
    assert user_store.ENVIRONMENT not in os.environ


@pytest.mark.rgw
def test_check_on_ceph_rgw_leaves_nothing(rgw_server: RGWServer,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", rgw_server.access_key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", rgw_server.secret_key)
    monkeypatch.setenv("AWS_DEFAULT_REGION", rgw_server.region)
    client = zr.make_s3_client(rgw_server.endpoint, rgw_server.region)
    bucket = f"users-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=bucket)
    try:
        cells = _on_users_store(rgw_server.endpoint, bucket, "zr-check", "fenced")
        assert {c.verdict.value for c in cells} <= {"holds", "vacuous"}, cells
        assert _keys(client, bucket) == []
    finally:
        from tests.rgw_plugin import empty_and_delete_bucket

        empty_and_delete_bucket(client, bucket)


def test_the_bridges_errors_have_an_operations_entry() -> None:
    import re

    text = (ROOT / "docs" / "user" / "operations.md").read_text(encoding="utf-8")
    explained = set(re.findall(r"^### `(\w+)`$", text, re.M))
    for error in (plugins.PluginCommitterError, user_store.PrefixNotEmptyError,
                  user_store.AreaEscapeError):
        assert issubclass(error, zr.CommitError)
        assert error.__name__ in explained


# -- the worked example, installed beside zerorename-research ----------------------------------


@pytest.fixture(scope="module")
def example_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv that sees this one's packages (a .pth file) and has the three
    distributions installed into it, editable, without dependencies."""
    venv = tmp_path_factory.mktemp("example") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    here = [p for p in sys.path if p.endswith("site-packages")]
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], check=True, capture_output=True, text=True)
    Path(site.stdout.strip(), "outer.pth").write_text("\n".join(here) + "\n")
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "-e",
                    str(ROOT / "reference"), "-e", str(ROOT / "model"), "-e",
                    str(ROOT / "examples" / "my_committer")], check=True, cwd=venv.parent)
    return venv


def _run(venv: Path, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}:{env['PATH']}"
    return subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=1200, check=False)


@pytest.mark.slow
def test_the_example_package_is_checked_from_the_command_line(example_venv: Path,
                                                              tmp_path: Path) -> None:
    """eager (an entry point of the example) breaks abortability under both protocols and
    its witnesses replay; careful holds (reference target and model target)."""
    for target, eager, careful in (("reference", "eager", "careful"),
                                   ("model", "eager-model", "careful-model")):
        traces = tmp_path / target
        done = _run(example_venv, "zerorename", "check", "--target", target, "--committer",
                    eager, "--committer", careful, "--store", "s3", "--quick", "--no-seeds"
                    if target == "model" else "--quick", "--property", "abortability",
                    "--property", "completeness", "--traces", str(traces), cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
        lines = done.stdout.splitlines()
        columns = next(line.split() for line in lines if line.startswith("committer "))
        rows = {line.split()[0]: dict(zip(columns, line.split(), strict=True))
                for line in lines if line.split()[:1] in ([eager], [careful])}
        assert rows[eager]["abortability"] == "VIOL/VIOL", done.stdout
        assert "VIOL" not in " ".join(rows[careful].values()), done.stdout
        for witness in sorted(traces.glob("*.jsonl")):
            assert witness.name.startswith(f"{eager}.s3.abortability.")
            replay = _run(example_venv, "zerorename", "trace", "replay", str(witness),
                          cwd=tmp_path)
            assert replay.returncode == 0 and "same final state" in replay.stdout, replay


@pytest.mark.slow
def test_the_example_package_is_checked_by_its_own_pytest_run(example_venv: Path,
                                                             tmp_path: Path) -> None:
    """Its suite passes (careful holds, eager's checks fail as its xfail marks expect); with
    --runxfail eager's failures show the violation and write witnesses that replay."""
    suite = ROOT / "examples" / "my_committer"
    done = _run(example_venv, "python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                "--zerorename-examples", "10", str(suite / "tests"), cwd=suite)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "4 passed, 4 xfailed" in done.stdout, done.stdout[-1000:]
    witnesses = tmp_path / "witnesses"
    done = _run(example_venv, "python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                "--runxfail", "-k", "state_machine and eager", "--zerorename-examples", "10",
                "--zerorename-witnesses", str(witnesses), str(suite / "tests"), cwd=suite)
    assert done.returncode == 1, done.stdout[-3000:]
    assert "2 failed" in done.stdout, done.stdout[-1000:]
    assert "eager on s3 violates" in done.stdout
    assert "eager-model on s3 violates" in done.stdout
    found = sorted(witnesses.glob("*.jsonl"))
    assert len(found) == 2, found
    for witness in found:
        replay = _run(example_venv, "zerorename", "trace", "replay", str(witness),
                      cwd=tmp_path)
        assert replay.returncode == 0 and "same final state" in replay.stdout, replay


