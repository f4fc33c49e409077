"""Shared pytest configuration: the Ceph RGW tier's fixtures (started once per session, only
when an ``rgw``-marked test is selected)."""

pytest_plugins = ["tests.rgw_plugin"]
