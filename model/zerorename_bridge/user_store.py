"""The reference committers' scenarios on a store of the user's: ``zerorename check --target
reference --endpoint-url URL [--profile P] --prefix s3://bucket/prefix``.

Every run of the harness — with its client-side faults: a crash between any two requests, a
task attempt partitioned from its driver, a request that takes effect and whose answer is
lost — goes to the user's store, under a throw-away area: a fresh ``zerorename-check-<uuid>``
directory under the given prefix, which must hold nothing (:class:`PrefixNotEmptyError`
otherwise: a check never writes beside data).  The scenarios' URLs (``s3://bucket/out/...``)
are rebased into that area (:class:`RebasedStore`), which refuses any URL outside it, and each
worker process of the matrix has its own sub-area.  The area is removed when the check ends,
also when it fails or is interrupted (:func:`throwaway_area`).

Worker processes find the store through :data:`ENVIRONMENT` (a JSON :class:`UserStore`), set
before the matrix starts them, so :func:`user_resolver` stays a module-level function of two
names like every resolver.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from zerorename.errors import CommitError
from zerorename.store import ListPage, ObjectInfo, Store, UploadInfo, list_all
from zerorename_bridge.backends import RealBackend
from zerorename_model.check.explore import Backend
from zerorename_model.engine.scenario import CommitterFactory

__all__ = ["ENVIRONMENT", "STORE_NAME", "AreaEscapeError", "PrefixNotEmptyError",
           "RebasedStore", "UserStore", "leftovers", "throwaway_area", "user_backend",
           "user_resolver"]

#: the name the user's store has in the matrix (the ``store`` column) and in witnesses
STORE_NAME = "user"
#: the environment variable that carries the :class:`UserStore` to worker processes
ENVIRONMENT = "ZERORENAME_CHECK_USER_STORE"
#: the bucket the scenarios' URLs name (zerorename_model.engine.scenario)
SCENARIO_ROOT = "s3://bucket"
#: the throw-away area's name under the given prefix
AREA_PREFIX = "zerorename-check-"


class PrefixNotEmptyError(CommitError):
    """``check --prefix`` names a place that holds objects or multipart uploads: a check writes
    only where nothing is, so that its cleanup can never remove anyone's data.  Its path is
    the prefix; choose an empty prefix (a new one)."""


class AreaEscapeError(CommitError):
    """A request of a checked committer named a URL outside the scenario's bucket, which the
    check cannot rebase into its throw-away area; it is refused before it reaches the store."""


@dataclass(frozen=True)
class UserStore:
    """Where and how to reach the user's store.  ``area``: the throw-away area, once made."""

    prefix: str
    endpoint_url: str | None = None
    region: str | None = None
    profile: str | None = None
    area: str | None = None

    def to_environment(self) -> None:
        os.environ[ENVIRONMENT] = json.dumps(asdict(self))

    @staticmethod
    def from_environment() -> UserStore:
        text = os.environ.get(ENVIRONMENT)
        if not text:
            raise CommitError(ENVIRONMENT, "no user store configured (the check sets it)")
        return UserStore(**json.loads(text))

    def client_store(self) -> Store:
        """An S3Store on the user's endpoint (credentials as boto3 finds them, from
        ``profile`` when given)."""
        if self.profile:
            os.environ["AWS_PROFILE"] = self.profile  # boto3's own way to pick a profile
        from zerorename.stores import S3Store, make_s3_client

        try:
            client = make_s3_client(endpoint_url=self.endpoint_url, region=self.region)
        except Exception as error:  # botocore's ProfileNotFound, bad endpoint
            raise CommitError(self.endpoint_url or self.prefix, (
                f"cannot make an S3 client ({type(error).__name__}: {error}); check "
                "--endpoint-url and --profile")) from error
        return S3Store(client, name=STORE_NAME)


def _dir(url: str) -> str:
    return url.rstrip("/") + "/"


class RebasedStore:
    """``store`` seen under other URLs: ``s3://bucket/<rest>`` is ``<base>/<rest>`` there.
    A URL outside ``s3://bucket/`` is refused (:class:`AreaEscapeError`)."""

    def __init__(self, store: Store, base: str, root: str = SCENARIO_ROOT) -> None:
        self._store = store
        self._base = _dir(base)
        self._root = _dir(root)
        self.name = STORE_NAME

    def _in(self, url: str) -> str:
        if url == self._root[:-1]:
            return self._base[:-1]
        if not url.startswith(self._root):
            raise AreaEscapeError(url, f"outside {self._root}, the only place a check may "
                                       f"write (it is rebased to {self._base})")
        return self._base + url[len(self._root):]

    def _out(self, url: str) -> str:
        if url.startswith(self._base):
            return self._root + url[len(self._base):]
        return url

    def capabilities(self) -> Any:
        return self._store.capabilities()

    def request_counts(self) -> dict[str, int]:
        return self._store.request_counts()

    def put(self, url: str, data: bytes, *, if_none_match: bool = False,
            if_match: str | None = None) -> str:
        return self._store.put(self._in(url), data, if_none_match=if_none_match,
                               if_match=if_match)

    def get(self, url: str) -> bytes:
        return self._store.get(self._in(url))

    def head(self, url: str) -> ObjectInfo | None:
        info = self._store.head(self._in(url))
        return None if info is None else replace(info, url=self._out(info.url))

    def list_page(self, prefix: str, *, delimiter: str | None = None,
                  token: str | None = None, max_keys: int = 1000) -> ListPage:
        page = self._store.list_page(self._in(prefix), delimiter=delimiter, token=token,
                                     max_keys=max_keys)
        return ListPage([replace(o, url=self._out(o.url)) for o in page.objects],
                        [self._out(p) for p in page.prefixes], page.token)

    def delete(self, url: str) -> None:
        self._store.delete(self._in(url))

    def delete_many(self, urls: Sequence[str]) -> None:
        self._store.delete_many([self._in(u) for u in urls])

    def copy(self, src: str, dst: str) -> str:
        return self._store.copy(self._in(src), self._in(dst))

    def rename(self, src: str, dst: str) -> None:
        self._store.rename(self._in(src), self._in(dst))

    def create_multipart(self, url: str) -> str:
        return self._store.create_multipart(self._in(url))

    def upload_part(self, url: str, upload_id: str, part_number: int, data: bytes) -> str:
        return self._store.upload_part(self._in(url), upload_id, part_number, data)

    def complete_multipart(self, url: str, upload_id: str, parts: Sequence[tuple[int, str]],
                           **kwargs: Any) -> str:
        return self._store.complete_multipart(self._in(url), upload_id, parts, **kwargs)

    def abort_multipart(self, url: str, upload_id: str) -> None:
        self._store.abort_multipart(self._in(url), upload_id)

    def list_multipart_uploads(self, prefix: str) -> list[UploadInfo]:
        return [replace(u, url=self._out(u.url))
                for u in self._store.list_multipart_uploads(self._in(prefix))]


def leftovers(store: Store, prefix: str) -> list[str]:
    """Every object and multipart upload under ``prefix`` (a directory)."""
    where = _dir(prefix)
    return ([o.url for o in list_all(store, where)]
            + [f"upload {u.url}" for u in store.list_multipart_uploads(where)])


def remove_all(store: Store, prefix: str) -> None:
    """Abort every upload and delete every object under ``prefix`` (a directory)."""
    where = _dir(prefix)
    for upload in store.list_multipart_uploads(where):
        with contextlib.suppress(CommitError):  # gone meanwhile
            store.abort_multipart(upload.url, upload.upload_id)
    urls = [o.url for o in list_all(store, where)]
    for start in range(0, len(urls), 1000):
        store.delete_many(urls[start:start + 1000])


@contextlib.contextmanager
def throwaway_area(config: UserStore) -> Iterator[UserStore]:
    """Refuse a prefix that holds data; make a fresh area under it; yield the configuration
    naming it (also in :data:`ENVIRONMENT`, for worker processes); remove the area afterwards,
    whatever happened (an exception, Ctrl-C)."""
    from zerorename.urls import parse_url

    parse_url(config.prefix)  # a bad URL: BadURLError naming it
    store = config.client_store()
    found = leftovers(store, config.prefix)
    if found:
        raise PrefixNotEmptyError(config.prefix, (
            f"holds {len(found)} object(s) or upload(s), e.g. {found[0]}; a check writes "
            "only under an empty prefix, so that its cleanup cannot touch anyone's data: "
            "give --prefix a new, empty one"))
    area = f"{_dir(config.prefix)}{AREA_PREFIX}{uuid.uuid4()}"
    made = replace(config, area=area)
    before = os.environ.get(ENVIRONMENT)
    made.to_environment()
    try:
        yield made
    finally:
        try:
            remove_all(store, area)
        finally:
            if before is None:
                os.environ.pop(ENVIRONMENT, None)
            else:
                os.environ[ENVIRONMENT] = before


_STORES: dict[str, Store] = {}


def user_backend() -> RealBackend:
    """A harness backend on the user's store, in this process's own sub-area of the check's
    throw-away area (emptied before each run, as every real backend is)."""
    config = UserStore.from_environment()
    if config.area is None:
        raise CommitError(ENVIRONMENT, "the user store has no throw-away area yet")
    key = json.dumps(asdict(config))
    if key not in _STORES:
        _STORES[key] = config.client_store()
    rebased = RebasedStore(_STORES[key], f"{config.area}/w{os.getpid()}")
    return RealBackend(rebased, SCENARIO_ROOT)


def user_resolver(committer: str, store: str) -> tuple[CommitterFactory, Backend]:
    """Reference committer ``committer`` (built in or a plug-in) on the user's store."""
    from zerorename_bridge.plugins import reference_factory

    if store != STORE_NAME:
        raise CommitError(store, f"only the user's store ({STORE_NAME}) is checked with "
                                 "--endpoint-url/--prefix")
    return reference_factory(committer), user_backend


def user_matrix(config: UserStore, committers: Sequence[str], props: Sequence[str] | None,
                *, quick: bool, traces: str | None, protocols: Sequence[str],
                progress: Any = None, probe: bool = True,
                probe_settings: Any = None) -> list[Any]:
    """The reference committers' cells on the user's store (the matrix's scopes, with the
    moto budgets: every request is a real one), after ``zerorename probe`` of the store, all
    under a throw-away area removed afterwards."""
    from zerorename_bridge.verdicts import MOTO_FULL, MOTO_QUICK, REFERENCE_COMMITTERS
    from zerorename_model.experiments.matrix import matrix

    names = list(committers or REFERENCE_COMMITTERS)
    with throwaway_area(config) as made:
        assert made.area is not None
        if progress:
            progress(f"user store: working under {made.area} (removed at the end)")
        if probe:
            from zerorename.stores.probe import ProbeSettings, run_probe
            from zerorename.stores.probe_text import render

            store = made.client_store()
            report = run_probe(store, made.area + "/probe", probe_settings or ProbeSettings())
            print(render(report, store.capabilities()))
        return matrix(names, [STORE_NAME], props, quick=quick, traces=traces,
                      progress=progress, resolve=user_resolver,
                      known=[*REFERENCE_COMMITTERS, *names], known_stores=(STORE_NAME,),
                      budget=MOTO_QUICK if quick else MOTO_FULL, protocols=protocols)
