"""Multipart uploads emulated with files, so that the S3 committers run on a local disk.

An upload lives under ``<root>/.zerorename-uploads/<upload-id>/`` (``meta.json`` naming its
destination, one file per part); ``root`` defaults to the system temp dir, so every process on
the machine — tasks and driver — shares them.  Creating, completing and aborting each hinge on
one ``os.rename`` of the upload's directory, so a concurrent abort or second complete sees
NoSuchUpload rather than half an upload.  Completing concatenates the parts into a temp file
beside the destination (or hard-links the only part there) and publishes it atomically.
There is no 5 MiB minimum part size (S3 has one).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

from zerorename.errors import NotFoundError, StoreError
from zerorename.store import UploadInfo
from zerorename.stores.common import bare_etag, md5_hex
from zerorename.stores.local.files import TMP_PREFIX, LocalFiles, make_dirs

__all__ = ["LocalMultipart"]

_PART_FMT = "part-{:05d}"
_MAX_PART = 10000


class LocalMultipart(LocalFiles):
    """Create, upload part, complete, abort and list emulated multipart uploads."""

    def _upload_dir(self, url: str, upload_id: str) -> Path:
        if not upload_id or not all(c in "0123456789abcdef" for c in upload_id):
            raise NotFoundError(url, f"no such upload {upload_id!r}", code="NoSuchUpload")
        return self.uploads_dir / upload_id

    def _check_meta(self, url: str, upload_id: str, directory: Path) -> None:
        try:
            meta = json.loads((directory / "meta.json").read_text("utf-8"))
        except FileNotFoundError as exc:
            raise NotFoundError(url, f"no such upload {upload_id}", code="NoSuchUpload") from exc
        if meta.get("url") != self._url(self._path(url)):
            raise NotFoundError(url, f"upload {upload_id} belongs to {meta.get('url')}",
                                code="NoSuchUpload")

    def create_multipart(self, url: str) -> str:
        self._counter.add("create_multipart")
        self._file_path(url)
        upload_id = uuid.uuid4().hex
        self.uploads_dir.mkdir(parents=True, exist_ok=True)
        staging = self.uploads_dir / f".new-{upload_id}"
        staging.mkdir()
        meta = {"url": self._url(self._path(url)), "initiated": time.time()}
        (staging / "meta.json").write_text(json.dumps(meta), "utf-8")
        os.rename(staging, self.uploads_dir / upload_id)  # appears complete, or not at all
        return upload_id

    def upload_part(self, url: str, upload_id: str, part_number: int, data: bytes) -> str:
        self._counter.add("upload_part")
        if not 1 <= part_number <= _MAX_PART:
            raise StoreError(url, f"part number {part_number} not in 1..{_MAX_PART}",
                             "InvalidArgument", 400)
        directory = self._upload_dir(url, upload_id)
        self._check_meta(url, upload_id, directory)
        etag = md5_hex(data)
        try:
            tmp = self._write_temp(url, str(directory), data)
            written = os.stat(tmp)
            part = directory / _PART_FMT.format(part_number)
            os.replace(tmp, part)
        except FileNotFoundError as exc:  # aborted or completed meanwhile
            raise NotFoundError(url, f"no such upload {upload_id}", code="NoSuchUpload") from exc
        self._remember_etag(str(part), written, etag)  # checked again by the complete
        self._counter.add_bytes(written=len(data))
        return etag

    def complete_multipart(
        self, url: str, upload_id: str, parts: Sequence[tuple[int, str]], *,
        if_none_match: bool = False, if_match: str | None = None,
    ) -> str:
        """Concatenate the parts beside the destination and publish atomically.

        The upload is claimed first (renamed aside), so a concurrent abort or second complete
        sees NoSuchUpload.  If publishing fails (If-None-Match lost, bad part), the upload is
        put back and stays listed, as on S3, for the caller to abort.  Unlike S3, completing an
        already completed upload again is NoSuchUpload rather than an idempotent 200.
        """
        self._counter.add("complete_multipart")
        path = self._file_path(url)
        directory = self._upload_dir(url, upload_id)
        claimed = self.uploads_dir / f".completing-{upload_id}-{uuid.uuid4().hex[:8]}"
        try:
            os.rename(directory, claimed)
        except FileNotFoundError as exc:
            raise NotFoundError(url, f"no such upload {upload_id}", code="NoSuchUpload") from exc
        try:
            self._check_meta(url, upload_id, claimed)
            files = self._validate_parts(url, claimed, parts, uploaded_in=directory)
            tmp = self._link_single_part(url, path, files)
            if tmp is not None:  # the part itself: its bytes' MD5 is the part's ETag
                etag = bare_etag(parts[0][1])
            else:
                digest = hashlib.md5(usedforsecurity=False)
                tmp = self._write_temp(url, os.path.dirname(path), None, files, digest)
                etag = digest.hexdigest()
            written = os.stat(tmp)
            self._publish(url, tmp, path, if_none_match=if_none_match, if_match=if_match)
            self._remember_etag(path, written, etag)
        except BaseException:
            with contextlib.suppress(OSError):
                os.rename(claimed, directory)
            raise
        shutil.rmtree(claimed, ignore_errors=True)
        return etag

    def _link_single_part(self, url: str, path: str, files: list[str]) -> str | None:
        """A temp file beside ``path`` that *is* the one part (a hard link), or None.

        An upload of one part (every file a Spark task writes below the part size) needs no
        concatenation: linking instead of copying saves writing the file's bytes a second
        time.  None when there are several parts, or the part's file system is not the
        destination's (or has no hard links): then the parts are copied.
        """
        if len(files) != 1:
            return None
        directory = os.path.dirname(path)
        tmp = os.path.join(directory, f"{TMP_PREFIX}{uuid.uuid4().hex}")
        try:
            make_dirs(url, directory)
            os.link(files[0], tmp)
        except OSError:
            return None
        return tmp

    def _validate_parts(
        self, url: str, directory: Path, parts: Sequence[tuple[int, str]], *,
        uploaded_in: Path,
    ) -> list[str]:
        """The part files of ``parts`` in ``directory`` (the claimed upload), each checked
        against its ETag; the hashes taken when the parts were uploaded into ``uploaded_in``
        (the upload's own directory, renamed since: same inodes) are used, not re-read."""
        if not parts:
            raise StoreError(url, "complete with no parts", "MalformedXML", 400)
        files: list[str] = []
        previous = 0
        for number, etag in sorted(parts, key=lambda p: p[0]):  # sorted like S3Store does
            if number == previous:
                raise StoreError(url, f"part {number} listed twice", "InvalidPartOrder", 400)
            previous = number
            part = directory / _PART_FMT.format(number)
            try:
                have = self._etag(str(part), part.stat(),
                                  cached_as=str(uploaded_in / _PART_FMT.format(number)))
            except FileNotFoundError as exc:
                raise StoreError(
                    url, f"part {number} was not uploaded", "InvalidPart", 400
                ) from exc
            if have != bare_etag(etag):
                raise StoreError(url, f"part {number} has ETag {have}, not {bare_etag(etag)}",
                                 "InvalidPart", 400)
            files.append(str(part))
        return files

    def abort_multipart(self, url: str, upload_id: str) -> None:
        self._counter.add("abort_multipart")
        directory = self._upload_dir(url, upload_id)
        self._check_meta(url, upload_id, directory)
        doomed = self.uploads_dir / f".aborting-{upload_id}-{uuid.uuid4().hex[:8]}"
        try:
            os.rename(directory, doomed)
        except FileNotFoundError as exc:
            raise NotFoundError(url, f"no such upload {upload_id}", code="NoSuchUpload") from exc
        shutil.rmtree(doomed, ignore_errors=True)

    def list_multipart_uploads(self, prefix: str) -> list[UploadInfo]:
        """Uploads whose destination URL starts with ``prefix``, ordered by (url, initiated)."""
        self._counter.add("list_multipart_uploads")
        want = self._url(self._path(prefix))
        found: list[UploadInfo] = []
        try:
            names = os.listdir(self.uploads_dir)
        except FileNotFoundError:
            return []
        for upload_id in names:
            if upload_id.startswith("."):
                continue
            try:
                meta = json.loads((self.uploads_dir / upload_id / "meta.json").read_text("utf-8"))
            except (FileNotFoundError, NotADirectoryError, json.JSONDecodeError):
                continue
            url = str(meta.get("url", ""))
            if url.startswith(want):
                found.append(UploadInfo(url, upload_id, float(meta.get("initiated", 0.0))))
        found.sort(key=lambda u: (u.url, u.initiated or 0.0, u.upload_id))
        return found

