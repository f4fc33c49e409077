"""A read-only view of a store's objects, for the checks that ask what a reader would see in a
given state of a run: unlike the store, it counts no request and makes nothing that lags
visible, so looking changes nothing that is looked at."""

from __future__ import annotations

from collections.abc import Mapping

from zerorename_model.engine.errors import not_found
from zerorename_model.engine.stores.records import Obj


class ObjectSnapshot:
    """The objects of a store, read-only: a reader that changes nothing it looks at (no request
    counted, no lagging write made visible), for checking what a reader of a record would see
    in a given state of a run."""

    def __init__(self, objects: Mapping[str, bytes | Obj]) -> None:
        """``objects``: url -> bytes (a run's final state) or stored object (a live store's)."""
        self.objects = {k: v.data if isinstance(v, Obj) else v for k, v in objects.items()}

    def get(self, url: str) -> bytes:
        if url not in self.objects:
            raise not_found(url)
        return self.objects[url]
