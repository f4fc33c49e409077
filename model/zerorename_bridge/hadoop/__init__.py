"""Hadoop's own committers beside the model: differential conformance (issue 33).

The model's verdicts for ``v1``, ``v2`` and ``manifest`` on ``hdfs`` are only as good as its
fidelity to Hadoop's FileOutputCommitter and ManifestCommitter.  This package runs those
classes (from the Hadoop 3.5.0 jars PySpark ships) on a local filesystem with HDFS's rename and
listing rules, under the schedule of a model run, and compares what both leave behind:

* :mod:`.session` compiles the small Java driver under ``java/`` (at first use, into a cache
  directory) and talks to one JVM per session over a line protocol;
* :mod:`.recording` re-runs a model scenario and records, per actor, which committer method
  ran when, around the store operations the trace already holds;
* :mod:`.translate` drives Hadoop's committers through that schedule, pausing each actor where
  the model paused it, and compares files (byte for byte), ``_SUCCESS`` and every call's
  outcome;
* :mod:`.differential` runs the shipped witnesses and random schedules of the verdict
  matrix's scopes through both.
"""
