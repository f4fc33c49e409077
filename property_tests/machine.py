"""The hypothesis state machine now lives in the research distribution
(:mod:`zerorename_bridge.statemachine`), so that a committer author's own test suite can run it
(:mod:`zerorename_bridge.pytest_plugin`); this module keeps the suites' imports working."""

from zerorename_bridge.statemachine import (
    ADJACENT,
    CommitMachineBase,
    check_machine,
    make_machine,
    relpaths,
    scenarios,
)

__all__ = ["ADJACENT", "CommitMachineBase", "check_machine", "make_machine", "relpaths",
           "scenarios"]
