"""The driver's overwrite for committers without a conflict mode (``magic``, ``manifest``,
``v1``, ``v2``): older files are deleted after the new output is published.  Driven through
:class:`JobDriver` and :func:`run_task` directly, no SparkSession: what is checked is what the
driver does when those deletes fail."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pytest

import zerorename as zr
from zerorename.errors import StoreError
from zerorename.spark.core import (
    JobDriver,
    OverwriteIncompleteError,
    WriteSpec,
    run_task,
    spec_from_options,
)
from zerorename.spark.reader import list_data_files
from zerorename.stores import DeleteManyError, LocalStore

COMMITTERS = ("magic", "manifest", "v1", "v2")


class RefusesOlderDeletes(LocalStore):
    """A store that refuses to delete files whose names carry ``job_id`` (AccessDenied)."""

    def __init__(self, job_id: str) -> None:
        super().__init__()
        self.job_id = job_id

    def delete_many(self, urls: Sequence[str]) -> None:
        refused = {u: StoreError(u, "Access Denied", code="AccessDenied", status=403)
                   for u in urls if self.job_id in u}
        super().delete_many([u for u in urls if u not in refused])
        if refused:
            raise DeleteManyError(refused, len(urls))


def spec_for(dest: str, committer: str, mode: str) -> WriteSpec:
    return spec_from_options({"path": dest, "committer": committer, "mode": mode,
                              "abort_grace_seconds": 0})


def write(spec: WriteSpec, partitions: int = 2, store: LocalStore | None = None) -> str:
    """One job of ``partitions`` tasks (each writes one file), committed by a driver on
    ``store``; returns the job id."""
    driver = JobDriver(spec, store)
    ready = driver.setup()
    batch = pa.RecordBatch.from_pydict({"x": [1, 2, 3]})
    driver.commit([run_task(ready, p, 0, [batch]) for p in range(partitions)])
    return spec.job_id


def data_files(dest: str) -> list[str]:
    return [Path(f.url).name for f in list_data_files(LocalStore(), dest)]


@pytest.mark.parametrize("committer", COMMITTERS)
def test_overwrite_replaces_the_older_files(tmp_path: Path, committer: str) -> None:
    dest = f"file://{tmp_path}/out"
    first = write(spec_for(dest, committer, "append"), partitions=3)
    second = write(spec_for(dest, committer, "overwrite"))
    names = data_files(dest)
    assert len(names) == 2 and all(second in n for n in names) and first not in str(names)


@pytest.mark.parametrize("committer", COMMITTERS)
def test_overwrite_whose_deletes_fail_says_published_and_a_rerun_completes_it(
        tmp_path: Path, committer: str) -> None:
    dest = f"file://{tmp_path}/out"
    first = write(spec_for(dest, committer, "append"), partitions=3)
    spec = spec_for(dest, committer, "overwrite")
    with pytest.raises(OverwriteIncompleteError) as raised:
        write(spec, store=RefusesOlderDeletes(first))
    error = raised.value
    assert isinstance(error, zr.CommitError) and error.path == dest
    assert len(error.left) == 3 and all(first in u for u in error.left)
    assert "published its output" in str(error) and "mode='overwrite'" in str(error)
    # the new output is published: its files and its _SUCCESS, beside the three older ones
    names = data_files(dest)
    assert sum(spec.job_id in n for n in names) == 2 and sum(first in n for n in names) == 3
    assert zr.read_success(LocalStore(), dest).job_id == spec.job_id
    # Spark calls abort() when commit raises: it must not take the published output back
    JobDriver(spec).abort()
    assert data_files(dest) == names
    # a rerun completes the overwrite
    third = write(spec_for(dest, committer, "overwrite"))
    assert all(third in n for n in data_files(dest)) and len(data_files(dest)) == 2



# -- destinations no job can own: refused on the driver, before any request ---------------


def _shared_bucket() -> tuple[zr.S3Store, dict[str, bytes]]:
    """A bucket ``shared`` holding a README and another team's table (moto must be active)."""
    client = zr.make_s3_client()
    client.create_bucket(Bucket="shared")
    store = zr.S3Store(client, retry=zr.RetryPolicy(max_attempts=1))
    for key, data in {"README.txt": b"shared bucket\n",
                      "other-team/table/part-0.parquet": b"PAR1 other PAR1"}.items():
        store.put(f"s3://shared/{key}", data)
    return store, _contents(store)


def _contents(store: zr.S3Store) -> dict[str, bytes]:
    return {o.url: store.get(o.url) for o in zr.list_dir(store, "s3://shared")}


@pytest.mark.parametrize("committer", (*COMMITTERS, "auto", "fenced", "directory"))
@pytest.mark.parametrize(("dest", "mode"), [("s3://shared", "overwrite"),
                                            ("s3://shared/", "overwrite"),
                                            ("s3://shared/../x", "append"),
                                            ("s3://shared/a//x", "append"),
                                            ("s3://shared/./x", "overwrite")])
def test_spark_writer_refuses_unownable_destinations_and_the_bucket_is_intact(
        monkeypatch: pytest.MonkeyPatch, committer: str, dest: str, mode: str) -> None:
    from moto import mock_aws

    import zerorename.spark as zs
    from zerorename.committers.destinations import UnownableDestinationError

    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    with mock_aws():
        store, before = _shared_bucket()
        with pytest.raises(UnownableDestinationError) as raised:
            spec_for(dest, committer, mode)
        assert isinstance(raised.value, zr.CommitError) and raised.value.path == dest
        # the public writer fails the same way before it looks at the DataFrame or the store
        with pytest.raises(UnownableDestinationError):
            zs.write(None, dest, committer=committer, mode=mode)  # type: ignore[arg-type]
        assert _contents(store) == before
        assert store.list_multipart_uploads("s3://shared/") == []


@pytest.mark.parametrize("committer", (*COMMITTERS, "directory"))
def test_success_and_the_log_name_what_an_overwrite_deleted(
        tmp_path: Path, committer: str, caplog: pytest.LogCaptureFixture) -> None:
    import json
    import logging

    from zerorename.committers.replaced import DELETED_COUNT_KEY, DELETED_KEYS_KEY

    dest = f"file://{tmp_path}/out"
    first = write(spec_for(dest, committer, "append"), partitions=3)
    older = sorted(n for n in data_files(dest))
    with caplog.at_level(logging.INFO, logger="zerorename"):
        write(spec_for(dest, committer, "overwrite"))
    diagnostics = zr.read_success(LocalStore(), dest).diagnostics
    keys = json.loads(diagnostics[DELETED_KEYS_KEY])
    data_keys = sorted(k for k in keys if first in k)
    assert [k.rsplit("/", 1)[-1] for k in data_keys] == older
    assert int(diagnostics[DELETED_COUNT_KEY]) == len(keys) >= 3
    assert any("deleted" in r.getMessage() and older[0] in r.getMessage()
               for r in caplog.records)
