"""The per-step invariants now live in the research distribution
(:mod:`zerorename_bridge.invariants`); this module keeps the suites' imports working."""

from zerorename_bridge.invariants import (
    VISIBILITY_ATTRIBUTE,
    DeclaresVisibility,
    StepWatch,
    promises_invisibility,
    published_before_commit,
    store_inconsistencies,
)

__all__ = ["VISIBILITY_ATTRIBUTE", "DeclaresVisibility", "StepWatch", "promises_invisibility",
           "published_before_commit", "store_inconsistencies"]
