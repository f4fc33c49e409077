"""Shared pytest configuration: the Ceph RGW tier's fixtures (started once per session, only
when an ``rgw``-marked test is selected), and moto's conditional writes made atomic for every
moto server and ``mock_aws`` the tests start in this process
(:func:`zerorename_bridge.embedded_s3.make_conditional_writes_atomic`): stock moto checks a
condition and then writes, so two racing writers can both win, and ``fenced`` refuses such a
store by default.  Our test server is atomic; ``docs/user/stores.md`` measures stock moto.

``run-tests.sh`` runs the suite on two processes (pytest-xdist, ``--dist loadgroup``); the
groups below keep together what must share a process: every test of Ceph RGW (one server,
started once), the Spark package (one session), and each module (its module fixtures run once;
two modules that share a session fixture form one group)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["tests.rgw_plugin"]

ROOT = Path(__file__).resolve().parents[1]
#: test modules that share a costly session fixture (tests/model/conftest.py's fenced row)
SHARED_GROUPS = {
    "tests/model/test_fenced.py": "fenced-s3-row",
    "tests/model/test_verdicts.py": "fenced-s3-row",
}
#: per-test time limits (seconds) of groups whose first test pays for a shared fixture above
#: pytest-timeout's 600 s: the fenced row's exploration took 487 s in one rehearsal and over
#: 600 s in the next, on two cores shared with the Spark tier
GROUP_TIMEOUTS = {"fenced-s3-row": 1800}
#: packages whose tests share package-scoped fixtures (the Spark tier's session and server)
PACKAGE_GROUPS = ("tests/spark/",)
#: the groups that take longest (minutes each, from the runs' ``--durations``), run first so
#: that neither worker is left with one of them at the end while the other idles
#: (``run-tests.sh`` passes ``--no-loadscope-reorder``: xdist would order groups by test count)
LONGEST_FIRST = ("fenced-s3-row", "tests/spark/", "rgw", "tests/test_committer_plugins.py",
                 "tests/test_towers.py", "tests/model/test_fenced_messages.py",
                 "tests/model/test_fenced_complete.py", "tests/conformance/test_hadoop_fenced.py",
                 "tests/test_cli.py", "tests/test_tla.py")


def pytest_configure(config: pytest.Config) -> None:
    from zerorename_bridge.embedded_s3 import make_conditional_writes_atomic
    from zerorename_bridge.hadoop.differential import SEED_VARIABLE, conformance_seed

    make_conditional_writes_atomic()
    # one seed for the conformance suites' random schedules in every worker process: drawn
    # here (the controller configures before its workers start, and they inherit it)
    if not os.environ.get(SEED_VARIABLE, "").strip():
        os.environ[SEED_VARIABLE] = str(conformance_seed())


def pytest_report_header(config: pytest.Config) -> str:
    from zerorename_bridge.hadoop.differential import SEED_VARIABLE, replay_hint

    return "conformance: " + replay_hint(int(os.environ[SEED_VARIABLE]))


def group_of(item: pytest.Item) -> str:
    """The xdist group ``item`` runs in (a group runs whole, in one worker process)."""
    rel = Path(str(item.path)).resolve().relative_to(ROOT).as_posix()
    params = getattr(getattr(item, "callspec", None), "params", {})
    if (item.get_closest_marker("rgw") is not None or "rgw" in params.values()
            or any(name.startswith("rgw") for name in item.fixturenames)):
        return "rgw"
    for package in PACKAGE_GROUPS:
        if rel.startswith(package):
            return package
    return SHARED_GROUPS.get(rel, rel)


@pytest.hookimpl(trylast=True)  # after deselection (-k, --deselect), which reads node IDs
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    loadgroup = bool(config.getvalue("loadgroup")) if hasattr(config.option, "loadgroup") else False
    groups = {item: group_of(item) for item in items}
    if loadgroup:  # the longest groups first; the others, and each group's tests, in order
        rank = {g: i for i, g in enumerate(LONGEST_FIRST)}
        items.sort(key=lambda item: rank.get(groups[item], len(rank)))
    for item in items:
        item.add_marker(pytest.mark.xdist_group(groups[item]))
        limit = GROUP_TIMEOUTS.get(groups[item])
        if limit is not None and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(limit))
        if loadgroup:
            _in_group(item, groups[item])


def _in_group(item: pytest.Item, group: str) -> None:
    """Name ``item``'s group in its node ID (``…@group``), which is how xdist's controller,
    given only the workers' node IDs, keeps a group in one worker.  xdist's own hook does the
    same from the marks, but since pytest 9.2 a node ID is read from ``Node._id`` and that
    hook's assignment to ``_nodeid`` no longer takes: without this, every test would be
    scheduled alone (two Ceph RGWs, module fixtures run twice)."""
    nodeid = item.nodeid
    if nodeid.rfind("@") > nodeid.rfind("]"):
        return  # named already (pytest before 9.2: xdist's hook)
    try:
        from _pytest.nodeid import coerce_node_id
    except ImportError:  # pytest before 9.2
        item._nodeid = f"{nodeid}@{group}"
        return
    item._id = coerce_node_id(f"{nodeid}@{group}")
