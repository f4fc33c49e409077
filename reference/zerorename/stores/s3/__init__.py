"""``S3Store``: the store protocol on a boto3 S3 client (AWS, moto, Ceph RGW, other S3s).

The design is described in :mod:`zerorename.stores.s3.store`; the store is assembled from one
module per concern, each importable on its own but re-exported here (the stable place):

* :mod:`.client` — making boto3 clients, and switching botocore's own retries off on any client;
* :mod:`.base` — the request plumbing: URL splitting, the one retry loop, request accounting,
  the endpoint's measured capabilities;
* :mod:`.errors` — S3's answers as :mod:`zerorename.errors` classes;
* :mod:`.conditional` — PUT, with If-None-Match / If-Match and their per-endpoint spelling;
* :mod:`.listing` — ListObjectsV2 and ListMultipartUploads paging;
* :mod:`.multipart` — create, upload part, complete, abort;
* :mod:`.store` — :class:`S3Store` itself (GET, DELETE, bulk delete, copy) and
  :func:`rename_by_copy`.
"""

from zerorename.stores.s3.client import disable_botocore_retries, make_s3_client
from zerorename.stores.s3.conditional import IF_MATCH_STYLE
from zerorename.stores.s3.errors import translate_botocore_error, translate_client_error
from zerorename.stores.s3.store import DELETE_BATCH, S3Store, rename_by_copy

#: the per-endpoint If-Match spelling, under the name it had before the split (tests clear it)
_IF_MATCH_STYLE = IF_MATCH_STYLE

__all__ = ["DELETE_BATCH", "IF_MATCH_STYLE", "S3Store", "disable_botocore_retries",
           "make_s3_client", "rename_by_copy", "translate_botocore_error",
           "translate_client_error"]
