"""Multipart uploads: initiate, upload a part, complete (conditionally where the store can),
abort, and list the uploads in progress.  An upload is invisible until completed, so these
touch the objects only at completion, through the state's one write."""

from __future__ import annotations

from collections.abc import Sequence

from zerorename.store import UploadInfo
from zerorename_model.engine.errors import ModelStoreError, not_found
from zerorename_model.engine.stores.conditions import check_conditions, conditional_gap
from zerorename_model.engine.stores.records import Upload, etag_of
from zerorename_model.engine.stores.state import StoreState


def create(state: StoreState, url: str) -> str:
    """Initiate an upload to ``url``; returns its ID."""
    if not state.profile.multipart:
        raise ModelStoreError(url, "NotImplemented", 501,
                              f"{state.profile.name} has no multipart uploads")
    initiated = state.next_upload_time()
    # IDs depend only on the key and how many uploads it has had, not on global order, so
    # schedules that differ only in the order of independent uploads reach the same state.
    state.upload_counter[url] += 1
    upload_id = f"up-{etag_of(url.encode())[:8]}-{state.upload_counter[url]}"
    state.uploads[upload_id] = Upload(url, {}, initiated)
    return upload_id


def upload_part(state: StoreState, url: str, upload_id: str, part_number: int,
                data: bytes) -> str:
    upload = _upload(state, url, upload_id)
    upload.parts[part_number] = bytes(data)
    return etag_of(data)


def complete(state: StoreState, url: str, upload_id: str, parts: Sequence[tuple[int, str]], *,
             if_none_match: bool = False, if_match: str | None = None) -> str:
    """Write the parts named, in order, as one object; a condition is checked only where the
    store makes completion conditional, and on a check-then-act store the upload may be
    completed or aborted by another request in the gap."""
    upload = _upload(state, url, upload_id)
    for number, etag in parts:
        if etag_of(upload.parts.get(number, b"\0missing")) != etag.strip('"'):
            raise ModelStoreError(url, "InvalidPart", 400, f"part {number} does not match")
    if (if_none_match or if_match is not None) and state.profile.conditional_complete:
        check_conditions(state, url, if_none_match, if_match)
        conditional_gap(state, url, True)
        _upload(state, url, upload_id)  # it may have been completed or aborted meanwhile
    del state.uploads[upload_id]
    return state.write_object(url, b"".join(upload.parts[n] for n, _ in sorted(parts)))


def abort(state: StoreState, url: str, upload_id: str) -> None:
    _upload(state, url, upload_id)
    del state.uploads[upload_id]


def list_uploads(state: StoreState, prefix: str) -> list[UploadInfo]:
    return [UploadInfo(u.url, uid, float(u.initiated)) for uid, u in state.uploads.items()
            if u.url.startswith(prefix)]


def _upload(state: StoreState, url: str, upload_id: str) -> Upload:
    upload = state.uploads.get(upload_id)
    if upload is None or upload.url != url:
        raise not_found(url, "NoSuchUpload")
    return upload
