"""The fixtures every module here uses (backends, the thread-leak check), defined in
``conftest_helpers`` beside the helpers that tests import by name."""

from .conftest_helpers import (  # noqa: F401 - re-exported for pytest as fixtures
    backend_env,
    env,
    env_with_rgw,
    local_env,
    moto_env,
    no_leaked_threads,
    rgw_env,
)
