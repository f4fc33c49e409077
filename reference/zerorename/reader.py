"""What readers of a destination may rely on: ``zr.committed_files``.

A reader that lists a destination sees whatever objects are there — files of older jobs the
last job did not overwrite, output a zombie may one day complete elsewhere.  A job committed by
the ``fenced`` committer names its output exactly: job commit writes every file, with its size
and ETag, into ``_SUCCESS`` (after the commit record that decided it).  ``committed_files``
returns that list, so a reader can open exactly the last committed job's files and check them.
"""

from __future__ import annotations

from collections.abc import Mapping

from zerorename.committers.fenced_records import SUCCESS_FILES_KEY, CommittedFile
from zerorename.errors import FormatError, NotFoundError
from zerorename.formats import SuccessData, parse_json
from zerorename.store import Store
from zerorename.urls import join

__all__ = ["committed_files"]


def committed_files(store: Store, dest: str) -> list[CommittedFile]:
    """The files of the last job committed to ``dest`` by the fenced committer, sorted by URL.

    Raises :class:`NotFoundError` when ``dest`` has no ``_SUCCESS`` (no job finished there,
    or a job is past its commit point but not yet rolled forward) and :class:`FormatError`
    when the ``_SUCCESS`` was not written by the fenced committer (others record only a
    sample of the file names) or is corrupt.
    """
    url = join(dest.rstrip("/"), "_SUCCESS")
    try:
        data = store.get(url)
    except NotFoundError:
        raise NotFoundError(url, "no _SUCCESS: no job has finished committing to "
                                 f"{dest}") from None
    parsed = parse_json(data, url)
    success = SuccessData.from_json(parsed, url)
    if not isinstance(parsed, Mapping) or SUCCESS_FILES_KEY not in parsed:
        raise FormatError(url, f"written by the {success.committer or 'unknown'} committer, "
                               f"which does not list every file ({SUCCESS_FILES_KEY!r} is "
                               "missing): only the fenced committer's _SUCCESS names its "
                               "output exactly")
    entries = parsed[SUCCESS_FILES_KEY]
    if not isinstance(entries, list):
        raise FormatError(url, f"field {SUCCESS_FILES_KEY!r} is not a list")
    files = [CommittedFile.from_json(e, f"{url} (file {i})") for i, e in enumerate(entries)]
    return sorted(files, key=lambda f: f.url)
