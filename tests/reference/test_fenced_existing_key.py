"""What the Python ``fenced`` does with an object another writer put at a key its job writes:
it replaces it (an unconditional complete), as docs/user/committers.md says, unlike the JVM
``fenced`` (``If-None-Match: *``).  The model's verdict on the two rules, and why the Python
committer was not changed: docs/research/fenced-complete-condition.md.  This test pins the
documented behaviour, so that changing the rule changes the docs too."""

from __future__ import annotations

from .conftest_helpers import Env, run_job


def test_an_object_already_at_a_key_is_replaced(env: Env) -> None:
    dest = env.dest()
    env.put(dest, "part-00000", b"another writer's object")
    files = {0: {"part-00000": b"the job's"}, 1: {"part-00001": b"other"}}
    run = run_job("fenced", env.store, dest, files)
    assert run.success is not None
    assert env.output(dest) == {"part-00000": b"the job's", "part-00001": b"other"}
    assert env.uploads(dest) == []
