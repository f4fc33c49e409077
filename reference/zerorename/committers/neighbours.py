"""Is another job active where this one is about to abort or delete?

A committer that aborts uploads no record names (the fenced committer's strays, the
``zerorename uploads abort`` janitor) may do so only where no other job can own them.  Other
jobs are not only at the top level of the destination: a job may write into a directory
*inside* it (a pipeline writing partition ``t/date=1`` while another writes table ``t``), or
into a directory *above* it, whose tasks write keys under this destination.  Every job of
every committer keeps a job root in the directory it writes to (``__magic_job-<id>``,
``__staging_job-<id>``, ``__fenced_job-<id>``, ``_temporary/<id>``, Hadoop's ``__magic``), so
"is another job active here?" is answered, for the directory of each key in question and for
every directory above it, by one short listing of the job roots held there — never by a
listing of the output.

A fenced job root holding only its commit record is a finished job (its record is kept to
fence late task commits): not active.  Any other job root is active, or was left by a crash —
in both cases what it may own is not ours to abort.  The answers are cached per directory
for one cleanup.
"""

from __future__ import annotations

from zerorename.committers.layout import FENCED_AREA, FENCED_COMMIT_RECORD, RENAME_AREA
from zerorename.store import Store
from zerorename.urls import dir_prefix, is_under, parse_url

__all__ = ["Neighbours", "ancestors"]

#: first-element prefix shared by the magic, staging and fenced job roots (and Hadoop's
#: ``__magic``): one listing of ``<dir>/__`` finds them all
_ROOTS_PREFIX = "__"


def ancestors(url: str) -> list[str]:
    """The directories strictly above ``url``, nearest first, down to the bucket (or file
    system) root, which keeps its slash: ``s3://b/t/x`` → ``s3://b/t``, ``s3://b/``."""
    parsed = parse_url(url)
    key = parsed.key.rstrip("/")
    parts = [p for p in key.split("/") if p]
    head = url[: url.index("://") + 3] + (f"{parsed.bucket}/" if parsed.bucket else "/")
    return [head + "/".join(parts[:n]) if n else head for n in range(len(parts) - 1, -1, -1)]


class Neighbours:
    """Answers, for one store and one job, whether another job is active in a directory."""

    def __init__(self, store: Store, own_root: str | None = None) -> None:
        self.store = store
        self.own_root = own_root.rstrip("/") if own_root is not None else None
        self._cache: dict[str, bool] = {}

    def active_at(self, directory: str) -> bool:
        """Does ``directory`` hold a job root of another job that is active (or crashed)?"""
        cached = self._cache.get(directory)
        if cached is None:
            cached = self._cache[directory] = self._look(directory)
        return cached

    def active_above(self, dest: str) -> bool:
        """Is another job active in any directory above ``dest``?"""
        return any(self.active_at(d) for d in ancestors(dest))

    def active_between(self, dest: str, url: str) -> bool:
        """Is another job active in ``dest`` or any directory between it and the key
        ``url`` (a key under ``dest``)?"""
        for directory in ancestors(url):
            if directory.endswith("/") or not is_under(directory, dest):
                break
            if self.active_at(directory):
                return True
        return False

    def may_own(self, dest: str, url: str) -> bool:
        """May a job on ``dest`` treat the unrecorded upload to ``url`` as its own?  Only
        when no other job is active above ``dest``, in it, or between it and ``url``."""
        return not self.active_above(dest) and not self.active_between(dest, url)

    def _look(self, directory: str) -> bool:
        base = directory if directory.endswith("/") else dir_prefix(directory)
        token: str | None = None
        while True:
            page = self.store.list_page(base + _ROOTS_PREFIX, delimiter="/", token=token)
            for prefix in page.prefixes:
                root = prefix.rstrip("/")
                if root == self.own_root:
                    continue
                name = root.rsplit("/", 1)[-1]
                if not FENCED_AREA.holds(name) or self._fenced_root_active(prefix):
                    return True
            if page.token is None:
                break
            token = page.token
        temporary = self.store.list_page(dir_prefix(base + RENAME_AREA.prefix), delimiter="/")
        return bool(temporary.objects) or any(p.rstrip("/") != self.own_root
                                              for p in temporary.prefixes)

    def _fenced_root_active(self, prefix: str) -> bool:
        """A fenced job root holding more than its commit record: set up, being committed,
        or left by a crash."""
        page = self.store.list_page(prefix, max_keys=2)
        return any(not o.url.endswith("/" + FENCED_COMMIT_RECORD) for o in page.objects)
