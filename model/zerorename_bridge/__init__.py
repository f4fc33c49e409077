"""zerorename_bridge: where the model and the reference meet (the research distribution).

The production package (``zerorename``) never imports this package or the model; the model
imports only the store protocol's value types (``zerorename.store``); this package imports
both, so that the model's harness and property suites can drive the reference committers, on
model stores or on real ones (moto, Ceph RGW).  It also holds what plugs the research tower
into production without production naming it: the research subcommands (:mod:`.cli`, entry
points of ``zerorename.commands``), the demo job (:mod:`.mainjob`), the Spark writer's fault
hooks (:mod:`.spark_faults`, an entry point of ``zerorename.spark_task_hooks``) and the
counting embedded S3 (:mod:`.embedded_s3`).  ``tests/test_towers.py`` holds both directions.
"""
