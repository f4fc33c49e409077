"""zerorename_model: an executable model of object stores and output-commit protocols.

Five layers, each importing only those below it (docs/architecture.md; tests/test_layers.py):
:mod:`.engine` (scenario, stores, the simulation harness), :mod:`.systems` (the protocols),
:mod:`.check` (properties, exploration), :mod:`.experiments` (scopes, verdicts, the matrix,
Table V, traces) and :mod:`.present` (trace analysis, figures, the demo).  Test machinery only:
production code (``zerorename``) never imports it.
"""
