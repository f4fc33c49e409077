"""The lowest layer: the simulated world and how it runs.  A scenario (:mod:`.scenario`), the
object stores (:mod:`.stores`), the harness that steps actors and faults over them
(:mod:`.harness`) and the choosers that pick each step (:mod:`.choices`).  It knows nothing of
any protocol, property or experiment: those are built on it."""
