"""An example committer package checked by zerorename's fault-injection suites."""
