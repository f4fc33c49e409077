"""zerorename.urls: parsing, joining and the directory semantics every cleanup relies on."""

from __future__ import annotations

from pathlib import Path

import pytest

from zerorename.errors import BadURLError, DestinationEscapeError
from zerorename.urls import (
    StoreURL,
    dir_prefix,
    is_hidden,
    is_under,
    join,
    parse_url,
    relative_to,
    user_url,
)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("s3://bucket/key", StoreURL("s3", "bucket", "key")),
        ("s3://bucket/a/b/c.parquet", StoreURL("s3", "bucket", "a/b/c.parquet")),
        ("s3://bucket", StoreURL("s3", "bucket", "")),
        ("s3://bucket/", StoreURL("s3", "bucket", "")),
        ("S3A://bucket/k", StoreURL("s3a", "bucket", "k")),
        ("file:///tmp/x", StoreURL("file", "", "tmp/x")),
        ("file:///", StoreURL("file", "", "")),
        ("mem://b/with space/ü+%", StoreURL("mem", "b", "with space/ü+%")),
    ],
)
def test_parse_url(url: str, expected: StoreURL) -> None:
    assert parse_url(url) == expected


@pytest.mark.parametrize("url", ["bucket/key", "ftp://x/y", "s3:///key", "file://relative/x", ""])
def test_parse_url_rejects(url: str) -> None:
    with pytest.raises(BadURLError) as info:
        parse_url(url)
    assert url in str(info.value)


def test_str_roundtrip() -> None:
    for url in ["s3://b/k/x", "file:///tmp/a b", "s3a://b/k"]:
        assert str(parse_url(url)) == url


def test_join() -> None:
    assert join("s3://b/out", "part-0") == "s3://b/out/part-0"
    assert join("s3://b/out/", "y=1/part-0") == "s3://b/out/y=1/part-0"
    assert join("s3://b/out", "a/./b/../c") == "s3://b/out/a/c"
    assert join("s3://b/out", "") == "s3://b/out"
    assert join("s3://b/out", ".") == "s3://b/out"
    assert join("file:///tmp/o", "x y/ü") == "file:///tmp/o/x y/ü"


@pytest.mark.parametrize("rel", ["../x", "a/../../x", "..", "/abs", "s3://other/x"])
def test_join_refuses_escape(rel: str) -> None:
    with pytest.raises(DestinationEscapeError):
        join("s3://b/out", rel)


def test_dir_prefix_and_is_under() -> None:
    assert dir_prefix("s3://b/out") == "s3://b/out/"
    assert dir_prefix("s3://b/out//") == "s3://b/out/"
    assert is_under("s3://b/out/x", "s3://b/out")
    assert is_under("s3://b/out", "s3://b/out/")
    assert not is_under("s3://b/out10/x", "s3://b/out")
    assert not is_under("s3://b/dataset10", "s3://b/dataset1")
    assert is_under("s3://b/dataset1/part", "s3://b/dataset1")


def test_relative_to() -> None:
    assert relative_to("s3://b/out/a/b", "s3://b/out") == "a/b"
    assert relative_to("s3://b/out", "s3://b/out") == ""
    with pytest.raises(DestinationEscapeError):
        relative_to("s3://b/out10/a", "s3://b/out")


@pytest.mark.parametrize(
    ("path", "hidden"),
    [("_SUCCESS", True), (".staging/x", True), ("a/_temporary/0/x", True),
     ("year=2024/part-0", False), ("a_b/c.d", False), ("", False)],
)
def test_is_hidden(path: str, hidden: bool) -> None:
    assert is_hidden(path) is hidden


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (Path("/tmp/out dir#1").as_uri(), "file:///tmp/out dir#1"),
        ("file:///tmp/100%25/a%2Bb", "file:///tmp/100%/a+b"),
        ("file:///tmp/plain", "file:///tmp/plain"),
        ("file:///tmp/not%zz-an-escape", "file:///tmp/not%zz-an-escape"),
        ("s3://bucket/100%25/a%20b", "s3://bucket/100%25/a%20b"),
        ("s3a://bucket/k%2F", "s3a://bucket/k%2F"),
        ("mem://b/x%20y", "mem://b/x%20y"),
    ],
)
def test_user_url_decodes_file_uris_only(given: str, expected: str) -> None:
    """A file: URI is RFC 8089 (``Path.as_uri()`` encodes ' ', '#', '%'); an S3 key is exact
    (``%`` is an ordinary character in it)."""
    assert user_url(given) == expected


def test_user_url_round_trips_path_as_uri() -> None:
    for path in ["/tmp/out dir#1", "/tmp/ü/€ x", "/tmp/50%", "/tmp/a?b;c=d", "/tmp/\udcff"]:
        assert parse_url(user_url(Path(path).as_uri())).key == path.lstrip("/")


def test_user_url_refuses_an_encoded_nul() -> None:
    with pytest.raises(BadURLError, match="NUL"):
        user_url("file:///tmp/a%00b")
