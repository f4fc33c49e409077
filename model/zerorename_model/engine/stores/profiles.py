"""What each model store is: its consistency, and which operations it has (the table in
docs/research/design.md).  Kept apart from the store so that the many modules that only name
or iterate the stores (the matrix's columns, the bridge's backends) need nothing else."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Profile:
    """The semantics of one store (see the table in docs/research/design.md)."""

    name: str
    eventual_listing: bool = False
    eventual_overwrite: bool = False
    negative_cache: bool = False
    rename: bool = False
    atomic_dir_rename: bool = False
    conditional_put: bool = False
    conditional_complete: bool = False
    multipart: bool = True
    #: a conditional write is check-then-act: the condition is checked, then other requests
    #: may run, then the object is written (two racers can both pass the check)
    conditional_race: bool = False
    #: the store accepts If-None-Match / If-Match and ignores them: every write succeeds
    ignores_conditions: bool = False
    #: real directories, as HDFS has them: a directory exists from the first file written
    #: below it (HDFS's ``create`` makes the parents) until it is deleted or renamed, even once
    #: empty; deleting a directory found non-empty deletes everything below it at once (what
    #: was moved in after the caller listed it too: :meth:`.store.ModelStore.delete_many`); a
    #: rename onto an existing directory moves the source *into* it; and a listing of
    #: the directory's children (a delimited LIST: ``FileSystem.listStatus``) of a directory
    #: that does not exist fails with "not found" instead of answering nothing
    directories: bool = False

    @property
    def consistent(self) -> bool:
        return not (self.eventual_listing or self.eventual_overwrite or self.negative_cache)


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("hdfs", rename=True, atomic_dir_rename=True, conditional_put=True,
                multipart=False, directories=True),
        Profile("s3-2018", eventual_listing=True, eventual_overwrite=True, negative_cache=True),
        Profile("s3", conditional_put=True, conditional_complete=True),
        Profile("gcs", rename=True, atomic_dir_rename=False, conditional_put=True,
                conditional_complete=True),
        Profile("abfs", rename=True, atomic_dir_rename=True),
        # S3-compatible stores that claim conditional writes and cannot fence with them
        # (issue 34: reported for some MinIO, SeaweedFS and versitygw configurations, GCS's
        # XML API, Backblaze B2): outside the matrix's columns, for fenced's rows
        Profile("s3-check-then-act", conditional_put=True, conditional_complete=True,
                conditional_race=True),
        Profile("s3-ignores-conditions", conditional_put=True, conditional_complete=True,
                ignores_conditions=True),
    )
}


#: the cluster filesystem of the staging committers (and the actors' local disks): HDFS as the
#: model had it before its directories (no rename into a directory, a missing directory lists
#: empty), because the S3A staging committers that list it are not in the Hadoop jars the
#: conformance suite runs, so nothing has yet checked what they do on a missing directory
CLUSTER_PROFILE = Profile("hdfs", rename=True, atomic_dir_rename=True, conditional_put=True,
                          multipart=False)
