"""The in-memory store of :mod:`fakes` in a process of its own, reached over a socket.

Why: a job's driver does not hold the store (S3 is a remote server) nor did it run the tasks
(executors did), so a measurement of the driver's memory must not run in the process that holds
100,000 objects.  ``python bench/store_server.py --address PATH [--rename]`` serves one
:class:`fakes.MemoryStore` on a Unix socket (:mod:`multiprocessing.managers`, authenticated with
the hex key in ``$ZR_STORE_AUTHKEY``), prints ``ready`` once it listens and serves until it is
terminated; :class:`RemoteStore` is the store protocol's client for it, as thread-safe as the
store (each thread gets a connection of its own; the server answers each on a thread and the
store takes its lock).

What crosses: every protocol call is one ``call(op, args, kwargs)`` on the served object; the
arguments and return values (``bytes``, ``str``, :class:`~zerorename.store.ObjectInfo`,
:class:`~zerorename.store.ListPage`, :class:`~zerorename.store.UploadInfo`,
:class:`~zerorename.store.StoreCapabilities`, lists of them) pickle as they are.  Exceptions do
not all: :mod:`zerorename.errors` classes take ``(path, reason)`` but pass one formatted message
to ``Exception``, so the default unpickling (``cls(*args)``) fails or builds a wrong one.  The
server therefore returns ``(class, args, attributes)`` and the client rebuilds the exception
without calling its ``__init__`` (same class, message, ``path``, ``reason``, ``code``,
``status``) and raises it.  No call returns an iterator (``list_all``/``list_dir`` are client-side
helpers over ``list_page``), so nothing needs wrapping for that.
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from multiprocessing.managers import BaseManager, BaseProxy
from pathlib import Path
from typing import Any

_REFERENCE = str(Path(__file__).resolve().parents[1] / "reference")
if _REFERENCE not in sys.path:  # run as a script: zerorename from this checkout
    sys.path.insert(0, _REFERENCE)

from zerorename.store import ListPage, ObjectInfo, StoreCapabilities, UploadInfo  # noqa: E402

__all__ = ["AUTHKEY_ENV", "RemoteStore", "StoreManager", "serve"]

AUTHKEY_ENV = "ZR_STORE_AUTHKEY"

#: the store protocol's calls plus the fake's bookkeeping (counts, snapshot), nothing else
OPS = frozenset({
    "capabilities", "put", "get", "head", "list_page", "delete", "delete_many", "copy",
    "rename", "create_multipart", "upload_part", "complete_multipart", "abort_multipart",
    "list_multipart_uploads", "request_counts", "object_count", "upload_count",
})

_Packed = tuple[type[BaseException], tuple[Any, ...], dict[str, Any]]


def _pack(exc: BaseException) -> _Packed:
    """What the client needs to raise the same exception; a class or attribute that does not
    pickle becomes a RuntimeError naming it."""
    packed: _Packed = (type(exc), tuple(exc.args), dict(vars(exc)))
    try:
        pickle.loads(pickle.dumps(packed))
    except Exception:
        return (RuntimeError, (f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}",), {})
    return packed


def _unpack(packed: _Packed) -> BaseException:
    cls, args, attrs = packed
    exc = cls.__new__(cls, *args)  # not cls(*args): the errors' __init__ takes (path, reason)
    exc.args = args
    exc.__dict__.update(attrs)
    return exc


class _Service:
    """The served object: one MemoryStore (in the server process)."""

    def __init__(self, rename: bool) -> None:
        from fakes import MemoryStore  # only the server holds the store

        self.store = MemoryStore(rename=rename)

    def call(self, op: str, args: tuple[Any, ...], kwargs: dict[str, Any]
             ) -> tuple[bool, Any]:
        """``(True, value)`` or ``(False, packed exception)``."""
        try:
            if op not in OPS:
                raise AttributeError(f"store_server serves no {op!r}")
            return True, getattr(self.store, op)(*args, **kwargs)
        except Exception as exc:
            return False, _pack(exc)

    def status(self) -> dict[str, Any]:
        """The server process's own figures (what the driver does not hold)."""
        text = Path("/proc/self/status").read_text()
        rss = re.search(r"^VmRSS:\s+(\d+) kB", text, re.MULTILINE)
        return {"objects": self.store.object_count(), "uploads": self.store.upload_count(),
                "pid": os.getpid(), "rss_mb": round(int(rss.group(1)) / 1024, 1) if rss else None}


_SERVED: list[_Service] = []  # the one served object (server process only)


def _served() -> _Service:
    if not _SERVED:
        raise RuntimeError("store_server: no store (serve() not called in this process)")
    return _SERVED[0]


def _callmethod(proxy: BaseProxy) -> Callable[..., Any]:
    """``BaseProxy._callmethod`` as it is: it returns the call's result (typeshed says None)."""
    method: Callable[..., Any] = getattr(proxy, "_callmethod")  # noqa: B009
    return method


class _ServiceProxy(BaseProxy):
    _exposed_ = ("call", "status")

    def call(self, op: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[bool, Any]:
        result: tuple[bool, Any] = _callmethod(self)("call", (op, args, kwargs))
        return result

    def status(self) -> dict[str, Any]:
        result: dict[str, Any] = _callmethod(self)("status")
        return result


class StoreManager(BaseManager):
    """Serves ``store()``: the process's one :class:`_Service`, shared by every client."""


StoreManager.register("store", callable=_served, proxytype=_ServiceProxy)


def serve(address: str, authkey: bytes, rename: bool) -> None:
    """Listen on ``address`` (a Unix socket path), say ``ready``, serve until terminated."""
    _SERVED.append(_Service(rename))
    server = StoreManager(address=address, authkey=authkey).get_server()
    print("ready", flush=True)
    server.serve_forever()


def _picklable(data: Any) -> Any:
    """A memoryview does not pickle; anything else goes as it is, for the store to judge."""
    return bytes(data) if isinstance(data, memoryview) else data


class RemoteStore:
    """The store protocol, each call sent to a :func:`serve` process."""

    def __init__(self, address: str, authkey: bytes, *, name: str = "memory") -> None:
        self.name = name
        self._manager = StoreManager(address=address, authkey=authkey)
        self._manager.connect()
        self._service: _ServiceProxy = self._manager.store()  # type: ignore[attr-defined]
        self._caps: StoreCapabilities | None = None
        self._caps_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"RemoteStore({self._manager.address!r})"

    def _call(self, op: str, *args: Any, **kwargs: Any) -> Any:
        ok, value = self._service.call(op, args, kwargs)
        if not ok:
            raise _unpack(value)
        return value

    # -- bookkeeping (the fake's, not the protocol's) ----------------------------------------

    def server_status(self) -> dict[str, Any]:
        return self._service.status()

    def object_count(self) -> int:
        result: int = self._call("object_count")
        return result

    def upload_count(self) -> int:
        result: int = self._call("upload_count")
        return result

    # -- the protocol ----------------------------------------------------------------------

    def request_counts(self) -> dict[str, int]:
        result: dict[str, int] = self._call("request_counts")
        return result

    def capabilities(self, url: str | None = None) -> StoreCapabilities:
        with self._caps_lock:  # constant for this store: asked once, as S3Store probes once
            if self._caps is None:
                self._caps = self._call("capabilities", url)
            return self._caps

    def put(self, url: str, data: bytes | bytearray | memoryview, *, if_none_match: bool = False,
            if_match: str | None = None) -> str:
        result: str = self._call("put", url, _picklable(data), if_none_match=if_none_match,
                                 if_match=if_match)
        return result

    def get(self, url: str) -> bytes:
        result: bytes = self._call("get", url)
        return result

    def head(self, url: str) -> ObjectInfo | None:
        result: ObjectInfo | None = self._call("head", url)
        return result

    def list_page(self, prefix: str, *, delimiter: str | None = None, token: str | None = None,
                  max_keys: int = 1000) -> ListPage:
        result: ListPage = self._call("list_page", prefix, delimiter=delimiter, token=token,
                                      max_keys=max_keys)
        return result

    def delete(self, url: str) -> None:
        self._call("delete", url)

    def delete_many(self, urls: Sequence[str]) -> None:
        self._call("delete_many", list(urls))

    def copy(self, src: str, dst: str) -> str:
        result: str = self._call("copy", src, dst)
        return result

    def rename(self, src: str, dst: str) -> None:
        self._call("rename", src, dst)

    def create_multipart(self, url: str) -> str:
        result: str = self._call("create_multipart", url)
        return result

    def upload_part(self, url: str, upload_id: str, part_number: int,
                    data: bytes | bytearray | memoryview) -> str:
        result: str = self._call("upload_part", url, upload_id, part_number,
                                 _picklable(data))
        return result

    def complete_multipart(self, url: str, upload_id: str, parts: Sequence[tuple[int, str]], *,
                           if_none_match: bool = False, if_match: str | None = None) -> str:
        result: str = self._call("complete_multipart", url, upload_id,
                                 [(n, e) for n, e in parts], if_none_match=if_none_match,
                                 if_match=if_match)
        return result

    def abort_multipart(self, url: str, upload_id: str) -> None:
        self._call("abort_multipart", url, upload_id)

    def list_multipart_uploads(self, prefix: str) -> list[UploadInfo]:
        result: list[UploadInfo] = self._call("list_multipart_uploads", prefix)
        return result


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--address", required=True, help="Unix socket path to listen on")
    ap.add_argument("--rename", action="store_true", help="a store with rename (HDFS-like)")
    args = ap.parse_args(argv)
    key = os.environ.get(AUTHKEY_ENV)
    if not key:
        ap.error(f"${AUTHKEY_ENV} (hex) is required")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    serve(args.address, bytes.fromhex(key), args.rename)
    return 0


if __name__ == "__main__":
    sys.exit(main())
