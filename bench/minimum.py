"""The jobs the cost benchmarks run, and the fewest requests their protocols could send.

Split out of :mod:`commit_costs` (which re-exports every name) because it is shared by
every benchmark — the job layout and each committer's thread option — and because the
protocol minimum is a derivation (``bench/README.md``, "The protocol minimum") that the tests
check on its own, apart from any measurement.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

S3A = ("directory", "partitioned", "magic", "fenced")
RENAME_FAMILY = ("manifest", "v1", "v2")
ON_LOCAL = ("directory", "partitioned", "magic", "fenced", "manifest", "v1", "v2")
ON_S3 = ("directory", "partitioned", "magic", "fenced", "manifest")
PROTOCOLS = ("spark", "hadoop")
#: The thread option each committer honours (docs/user/committers.md, "Threads").
THREAD_OPTION = {name: "fs.s3a.committer.threads" for name in S3A} | {
    name: "mapreduce.manifest.committer.io.threads" for name in RENAME_FAMILY}
#: Operations reported as one: a minimal implementation may batch deletes (DeleteObjects) or
#: not; what the protocol needs is that the objects go, in at least this many requests.
DELETES = ("delete", "delete_many")
PAGE = 1000  # keys per LIST page and per DeleteObjects request (S3's limits)


# -- the job ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """``tasks`` tasks writing ``files_per_task`` files of ``size`` bytes, spread over
    ``partitions`` directories (``part=K/``), as a partitioned Spark write would."""

    tasks: int
    files_per_task: int
    size: int = 100
    partitions: int = 2

    @property
    def files(self) -> int:
        return self.tasks * self.files_per_task

    def paths(self, task: int) -> list[str]:
        return [f"part={f % self.partitions}/part-{task:05d}-{f:04d}.bin"
                for f in range(self.files_per_task)]


def pages(n: int) -> int:
    """Requests needed to list or bulk-delete ``n`` keys (1000 per request)."""
    return math.ceil(n / PAGE)


def merge_renames(task_paths: Sequence[Sequence[str]]) -> int:
    """Renames Hadoop's ``FileOutputCommitter.mergePaths`` needs to merge each task's tree, in
    order, into a destination directory that exists, on a store with atomic directory rename.

    mergePaths renames a whole source entry when the destination has nothing at that name, and
    recurses into directories that exist on both sides; so the first task to write a partition
    moves it in one rename and later tasks move their files one by one.
    """
    existing: set[str] = set()  # every file and directory path present in the destination
    renames = 0
    for paths in task_paths:
        tree: dict[str, set[str]] = {}  # directory ("" = root) -> child paths
        for path in paths:
            parts = path.split("/")
            for depth in range(len(parts)):
                parent = "/".join(parts[:depth])
                tree.setdefault(parent, set()).add("/".join(parts[:depth + 1]))

        def merge(directory: str, tree: dict[str, set[str]] = tree,
                  paths: Sequence[str] = paths) -> int:
            count = 0
            for child in sorted(tree.get(directory, ())):
                if child in existing and child in tree:  # directory on both sides: recurse
                    count += merge(child)
                    continue
                count += 1  # absent: one rename moves the whole entry (a file replacing a
                # file would also need a delete; these layouts never collide)
                existing.add(child)
                for path in paths:  # everything below it is now in the destination
                    if path.startswith(child + "/"):
                        pieces = path.split("/")
                        existing.update("/".join(pieces[:d]) for d in range(1, len(pieces) + 1))
            return count

        renames += merge("")
    return renames


def protocol_minimum(committer: str, store_kind: str, protocol: str,
                     layout: Layout) -> dict[str, int]:
    """The fewest requests, by store operation, any implementation of ``committer``'s protocol
    needs for ``layout`` (every task commits once, every file fits one part/PUT).

    Ground rules (the README has the derivation in prose):

    * every file's bytes reach the store once, invisibly to readers until its publication
      step: S3A committers create an upload and upload its part; the rename family PUTs it
      under ``_temporary``;
    * every file is published once: complete (S3A), rename (rename family; on S3 a server-side
      copy, the source going with the job's cleanup), or — v1/v2 on a store with atomic
      directory rename — as few renames as Hadoop's mergePaths needs (:func:`merge_renames`);
    * a task commit is durable in the store (the task side cannot know which protocol its
      driver uses; Hadoop's needs the record, and abort after a lost driver needs it): one
      pendingset or manifest PUT per task; v1 renames the attempt directory instead;
    * an actor remembers what it did itself, so nothing is listed to rediscover it — except
      where the contract lets files appear without the committer seeing them (the rename
      family's attempt directory, ``tc.work_path``), which must be listed;
    * Spark's protocol hands the records to the driver; Hadoop's finds them: one LIST per
      1000 records and a GET per record;
    * ``_SUCCESS`` is one PUT; cleanup deletes what the job still holds in the store, 1000
      keys per request, and needs no LIST under Spark's protocol (the messages name the
      records); setup needs no request (directories are implicit).
    """
    F, T = layout.files, layout.tasks
    hadoop = protocol == "hadoop"
    need: Counter[str] = Counter({"put": 1})  # _SUCCESS
    task_paths = [layout.paths(t) for t in range(T)]
    if committer in S3A:
        need.update({"create_multipart": F, "upload_part": F, "complete_multipart": F,
                     "put": T, "delete_many": pages(T)})
        if hadoop:
            need.update({"list_page": pages(T), "get": T})
    elif committer == "manifest":
        need.update({"put": F + T, "list_page": sum(pages(len(p)) for p in task_paths)})
        if hadoop:
            need.update({"list_page": pages(T), "get": T})
        if store_kind == "s3":
            need.update({"copy": F, "delete_many": pages(F + T)})  # sources + manifests
        else:
            need.update({"rename": F, "delete_many": pages(T)})
    elif committer == "v1":
        if store_kind != "local":
            raise ValueError("v1 minimum is derived for a store with atomic directory rename")
        # task commit: one directory rename; job commit: one listing of the committed
        # files (by the tasks or the driver) and one of the destination, then mergePaths
        need.update({"put": F, "rename": T + merge_renames(task_paths),
                     "list_page": pages(F) + 1})
    elif committer == "v2":
        if store_kind != "local":
            raise ValueError("v2 minimum is derived for a store with atomic directory rename")
        # each task lists its attempt directory and the destination, then merges itself
        need.update({"put": F, "rename": merge_renames(task_paths),
                     "list_page": sum(pages(len(p)) + 1 for p in task_paths)})
    else:
        raise ValueError(f"no protocol minimum for committer {committer!r}")
    return {op: n for op, n in sorted(need.items()) if n}


def below_minimum(measured: dict[str, int], minimum: dict[str, int]) -> dict[str, tuple[int, int]]:
    """Operations where ``measured`` is under ``minimum`` (deletes counted together)."""
    short: dict[str, tuple[int, int]] = {}
    for op, need in minimum.items():
        have = sum(measured.get(o, 0) for o in DELETES) if op in DELETES else measured.get(op, 0)
        if have < need:
            short[op] = (have, need)
    return short


# -- running one job through the public API ----------------------------------------------
