"""A committer's environment without a harness, for tests that drive one committer by hand:
one store, no steps (each action runs at once), local disk a fresh HDFS-like store."""

from __future__ import annotations

from dataclasses import dataclass

from zerorename.store import Store
from zerorename_model.engine.stores.profiles import Profile
from zerorename_model.engine.stores.store import ModelStore


@dataclass
class BareEnv:
    """What a model committer asks of its environment, answered by ``store`` alone."""

    store: ModelStore

    @property
    def profile(self) -> Profile:
        return self.store.profile

    @property
    def cluster(self) -> Store:
        return self.store

    def local(self) -> Store:
        return ModelStore("hdfs")

    def step(self, what: str, action):  # type: ignore[no-untyped-def]
        return action()
