"""Shared pytest configuration: the Ceph RGW tier's fixtures (started once per session, only
when an ``rgw``-marked test is selected), and moto's conditional writes made atomic for every
moto server and ``mock_aws`` the tests start in this process
(:func:`zerorename_bridge.embedded_s3.make_conditional_writes_atomic`): stock moto checks a
condition and then writes, so two racing writers can both win, and ``fenced`` refuses such a
store by default.  Our test server is atomic; ``docs/user/stores.md`` measures stock moto."""

import pytest

pytest_plugins = ["tests.rgw_plugin"]


def pytest_configure(config: pytest.Config) -> None:
    from zerorename_bridge.embedded_s3 import make_conditional_writes_atomic

    make_conditional_writes_atomic()
