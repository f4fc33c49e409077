"""The local store hashes what it writes once: parts as they arrive, a completed upload from
its parts' hashes or while concatenating them; ETags stay the MD5 of the bytes, and a file
replaced behind the store's back is hashed afresh."""

from __future__ import annotations

import builtins
import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from zerorename.stores import LocalStore
from zerorename.stores.local import files as local_files


class _CountReads:
    """``open`` for the store's modules that counts files opened for reading."""

    def __init__(self) -> None:
        self.reads: list[str] = []

    def __call__(self, path: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if "r" in mode:
            self.reads.append(os.path.basename(str(path)))
        return builtins.open(path, mode, *args, **kwargs)


@pytest.mark.parametrize("parts", [1, 3])
def test_complete_hashes_no_byte_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       parts: int) -> None:
    store = LocalStore(tmp_path)
    url = f"file://{tmp_path}/out/data.bin"
    chunks = [os.urandom(100_000 + i) for i in range(parts)]
    upload = store.create_multipart(url)
    etags = [store.upload_part(url, upload, n + 1, c) for n, c in enumerate(chunks)]
    counting = _CountReads()
    monkeypatch.setattr(local_files, "open", counting, raising=False)

    etag = store.complete_multipart(url, upload, list(enumerate(etags, 1)))
    info = store.head(url)

    body = b"".join(chunks)
    assert etag == hashlib.md5(body).hexdigest() == (info.etag if info else None)
    assert (tmp_path / "out" / "data.bin").read_bytes() == body
    # one part is linked into place: nothing read; several are read once, to concatenate
    assert len(counting.reads) == (0 if parts == 1 else parts), counting.reads


def test_a_file_replaced_behind_the_store_gets_its_own_etag(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    url = f"file://{tmp_path}/out/data.bin"
    first = store.put(url, b"first")
    assert store.head(url).etag == first  # type: ignore[union-attr]
    other = tmp_path / "elsewhere"
    other.write_bytes(b"other")
    os.replace(other, tmp_path / "out" / "data.bin")
    assert store.head(url).etag == hashlib.md5(b"other").hexdigest()  # type: ignore[union-attr]
