"""Presentation: a trace file read as data (:mod:`.analysis`), its happens-before graph and slice
(:mod:`.hb`), figures (:mod:`.viz`) and the demo (:mod:`.demo`).  The top layer: nothing in the
model imports it."""
