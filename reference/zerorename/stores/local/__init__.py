"""``LocalStore``: the store protocol on a POSIX file system, for ``file:///`` URLs.

The design is described in :mod:`zerorename.stores.local.store`; the store is assembled from
one module per concern, re-exported here (the stable place):

* :mod:`.files` — URL to path, ETags, atomic publication (temp file, then ``os.replace`` or
  ``os.link``), the pruning of a committer's empty working directories;
* :mod:`.listing` — ListObjectsV2 on a directory tree;
* :mod:`.multipart` — multipart uploads emulated with files;
* :mod:`.store` — :class:`LocalStore` itself (PUT, GET, HEAD, DELETE, copy, atomic rename).
"""

from zerorename.stores.common import DeleteManyError, RequestCounter, bare_etag, md5_hex
from zerorename.stores.local.files import (
    COMMITTER_AREA_NAMES,
    COMMITTER_AREA_PREFIXES,
    TMP_PREFIX,
    UPLOADS_DIR,
    prune_empty_dirs,
)
from zerorename.stores.local.store import LocalStore

__all__ = [
    "COMMITTER_AREA_NAMES",
    "COMMITTER_AREA_PREFIXES",
    "TMP_PREFIX",
    "UPLOADS_DIR",
    "DeleteManyError",
    "LocalStore",
    "RequestCounter",
    "bare_etag",
    "md5_hex",
    "prune_empty_dirs",
]
