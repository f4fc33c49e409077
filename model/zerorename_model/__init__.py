"""zerorename_model: an executable model of object stores and output-commit protocols.

Stores (:mod:`.stores`), the simulation harness (:mod:`.harness`), protocols
(:mod:`.protocols`), properties (:mod:`.properties`), exploration (:mod:`.explore`) and traces
(:mod:`.trace`).  Test machinery only: production code (``zerorename``) never imports it.
"""
