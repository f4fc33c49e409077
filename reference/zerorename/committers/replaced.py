"""What an overwrite deleted, recorded where a user looks afterwards: ``_SUCCESS`` and the log.

An overwrite (Spark's ``mode="overwrite"``, a staging committer's conflict mode ``replace``)
deletes the older output of the destination.  A user who finds files missing must be able to
tell which job deleted them: the job's ``_SUCCESS`` names how many files it deleted and the
first :data:`KEYS_SHOWN` of them (paths relative to the destination), and the log says the
same at INFO.
"""

from __future__ import annotations

import json
import logging
from collections.abc import MutableMapping, Sequence

from zerorename.urls import relative_to

__all__ = ["DELETED_COUNT_KEY", "DELETED_KEYS_KEY", "KEYS_SHOWN", "record_deleted"]

LOG = logging.getLogger("zerorename")

#: ``_SUCCESS`` diagnostics: how many files the overwrite deleted, and which (a JSON list of
#: at most :data:`KEYS_SHOWN` paths relative to the destination, sorted)
DELETED_COUNT_KEY = "overwrite.deleted.count"
DELETED_KEYS_KEY = "overwrite.deleted.keys"
KEYS_SHOWN = 100


def record_deleted(diagnostics: MutableMapping[str, str], dest: str, urls: Sequence[str],
                   *, job_id: str) -> None:
    """Put the count and the first keys of ``urls`` in ``diagnostics`` and log them."""
    shown = sorted(relative_to(u, dest) for u in urls)[:KEYS_SHOWN]
    diagnostics[DELETED_COUNT_KEY] = str(len(urls))
    diagnostics[DELETED_KEYS_KEY] = json.dumps(shown, ensure_ascii=False)
    more = f" (and {len(urls) - len(shown)} more)" if len(urls) > len(shown) else ""
    LOG.info("zerorename: job %s overwrote %s: deleted %d older file(s): %s%s", job_id, dest,
             len(urls), ", ".join(shown), more)
