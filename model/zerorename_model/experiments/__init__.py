"""Experiments: what is explored and what it found.  Scopes and seeds, the verdict of each
(scope, committer, store) cell (:mod:`.verdicts`) and the matrix of them (:mod:`.matrix`), the
production bugs (:mod:`.bugs`), Table V (:mod:`.tablev`), traces on disk (:mod:`.trace`) and the
engine's speed (:mod:`.speed`).  Built on every layer below."""
