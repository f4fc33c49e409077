"""The main job, small: one committer that runs and one the store cannot serve."""

from __future__ import annotations

from typing import Any

import pytest

from zerorename_bridge import mainjob

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def test_main_job_checks_properties_and_explains_skips(spark: Any,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    status = mainjob.main(["--rows", "2000", "--committers", "magic,v1", "--no-model",
                           "--research"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert spark.sparkContext._jsc is not None  # the caller's session is left running
    report = out[out.index("== magic"):]
    for line in ("completeness        yes", "exclusivity         yes",
                 "abortability        yes (after the failed job: 0 visible, 0 hidden, "
                 "0 pending, 0 local staging files)", "bytes copied        0"):
        assert line in report
    assert "  skipped: the v1 committer publishes by rename" in out  # the report, on stdout
    assert "1 committers ran, 1 skipped; properties held on every run." in out
