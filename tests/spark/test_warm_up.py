"""``local_session``'s warm-up writes what a session's first write needs started: a task on
every executor slot (each slot's Python worker), with the common column types."""

from __future__ import annotations

from typing import Any

from zerorename.spark.session import warm_up_frame


def test_warm_up_frame_has_a_task_per_slot_and_the_common_types(spark: Any) -> None:
    frame = warm_up_frame(spark)
    slots = int(spark.sparkContext.master.split("[")[1].split(",")[0].rstrip("]"))
    assert frame.rdd.getNumPartitions() >= slots >= 2
    assert {t for _, t in frame.dtypes} >= {"bigint", "int", "double", "string", "timestamp",
                                            "date", "decimal(18,2)", "boolean"}
