"""The systems under study: the commit protocols (:mod:`.protocols`, one module each) and the
lakeFS service one of them uses (:mod:`.lakefs_store`).  Built on :mod:`..engine` only."""
