"""Table V computed by the model's probes, with each witness trace saved; and, for committers
that publish a record of their output, the job commit's atomicity for a reader of that record."""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from zerorename_model.engine.harness import Move, Run
from zrpaper.results import (
    ReaderSearch,
    RecordReader,
    TableV,
    TableVCell,
    TableVDifference,
)
from zrpaper.settings import TABLEV_MAX_RUNS, TRACES, rel


def compute_tablev(columns: Sequence[str] | None = None) -> TableV:
    """Table V for ``columns`` (default: every registered column of the model's table)."""
    from zerorename_model.experiments.tablev import (
        ATTRIBUTES,
        COLUMNS,
        PAPER_COLUMN,
        PAPER_SOURCE,
        PAPER_TABLE_V,
        compare,
        compute,
    )
    from zerorename_model.experiments.trace import write_trace

    table = compute(COLUMNS if columns is None else columns, max_runs=TABLEV_MAX_RUNS)
    cells: dict[str, dict[str, TableVCell]] = {}
    for committer, row in table.items():
        cells[committer] = {}
        for attribute, cell in row.items():
            explored = cell.explored.without_seconds().without_scenario()
            path = None
            if cell.witness_trace and (explored.found or not cell.value):
                path = rel(write_trace(TRACES / f"tablev.{committer}.{attribute}.jsonl",
                                        cell.witness_trace))
            cells[committer][attribute] = TableVCell(cell.value, cell.detail, explored, path)
    differences = [TableVDifference(d.committer, d.attribute, d.ours, d.paper, d.reason)
                   for d in compare(table)]
    record_reader = {c: record_reader_atomicity(c) for c in table if c in RECORD_READERS}
    return TableV(PAPER_SOURCE, list(ATTRIBUTES), PAPER_TABLE_V, PAPER_COLUMN, cells,
                  differences, record_reader)


#: Committers that publish a record of their output (``_SUCCESS`` naming every committed file,
#: written after the last of them): the module and function that read it, as a reader that
#: trusts the record rather than a listing would.  Table V's "Atomic Job Commit" probe lists
#: the destination; for these committers it is asked again of a reader of the record.
RECORD_READERS = {"fenced": ("zerorename_model.systems.protocols.fenced", "committed_files")}
RECORD_READER_DRIVERS = ("spark", "hadoop")


def record_reader_atomicity(committer: str) -> RecordReader:
    """Table V's atomic-job-commit probe (one task, two files, a driver restart anywhere,
    including in the middle of ``commit_job``), with the observation made in every state by a
    reader of the committer's record: it must see nothing of the job, or every file of every
    accepted attempt with the size the record gives.  Under both job-commit protocols."""
    from zerorename_model.engine.scenario import Faults, Scenario
    from zerorename_model.engine.stores.snapshot import ObjectSnapshot
    from zerorename_model.experiments.tablev import TWO_FILES, Probe, search
    from zerorename_model.experiments.trace import write_trace

    module, name = RECORD_READERS[committer]
    read = getattr(importlib.import_module(module), name)

    def sees_a_part(run: Run, _move: Move | None) -> str | None:
        store = ObjectSnapshot(run.store.snapshot())
        for job in run.jobs:
            named = read(store, job.spec.dest)
            if not named:
                continue
            got = {rel: store.objects.get(f"{job.spec.dest}/{rel}") for rel in named}
            want = {rel: data for task, _message in job.accepted.values()
                    for rel, data in run.written.get(task.name, {}).items()}
            if got != want or any(len(got[r] or b"") != f.size for r, f in named.items()):
                return (f"the record names {sorted(got)}, the accepted output is "
                        f"{sorted(want)}")
        return None

    explored: dict[str, ReaderSearch] = {}
    found, trace = None, None
    for driver in RECORD_READER_DRIVERS:
        def scenario(c: str, driver: str = driver) -> Scenario:
            return Scenario(c, store="s3", tasks=1, files=TWO_FILES, max_attempts=2,
                            driver=driver, faults=Faults(settle=False, restart=1))

        probe = Probe(scenario, "forall", "a reader of the record sees part of the output",
                      watch=sees_a_part)
        result = search(probe, committer, max_runs=TABLEV_MAX_RUNS)
        explored[driver] = ReaderSearch(result.found, result.explored.runs,
                                        result.explored.states, result.explored.complete)
        if result.found and found is None:
            found = result.found
            assert result.result is not None
            trace = rel(write_trace(
                TRACES / f"tablev.{committer}.atomic_job_commit.record.jsonl",
                result.result.trace))
    return RecordReader(found is None, f"{module}.{name}",
                        found or "no schedule found where a reader of the record sees part of "
                                 "the output", explored, trace)


