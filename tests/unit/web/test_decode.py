"""Unpacking a body piece by piece within the limit (issue 23): no call inflates more than ``PIECE`` bytes,
whatever the ratio, and each layer's output counts."""

from __future__ import annotations

import gzip
import zlib

import pytest

from san_desktop.web.decode import PIECE, BodyDecoder, codings
from san_desktop.web.errors import PageFetchError, PageTooLargeError

TEXT = ("<p>Raft elects a leader that replicates its log.</p>\n" * 2000).encode()


def _unpacked(layers: list[str], body: bytes, max_bytes: int = 10_000_000, chunk: int = 1000) -> list[bytes]:
    decoder = BodyDecoder(layers, max_bytes)
    return [piece for start in range(0, len(body), chunk) for piece in decoder.feed(body[start : start + chunk])]


@pytest.mark.parametrize(
    ("layers", "packed"),
    [
        ([], TEXT),
        (["gzip"], gzip.compress(TEXT)),
        (["x-gzip"], gzip.compress(TEXT)),
        (["deflate"], zlib.compress(TEXT)),  # as the standard says: a zlib stream
        (["deflate"], zlib.compress(TEXT)[2:-4]),  # as some servers send it: raw deflate
        (["deflate", "gzip"], gzip.compress(zlib.compress(TEXT))),  # deflate first, then gzip
    ],
)
def test_each_packing_unpacks_to_the_page(layers: list[str], packed: bytes) -> None:
    assert b"".join(_unpacked(layers, packed)) == TEXT
    assert b"".join(_unpacked(layers, packed, chunk=1)) == TEXT  # a byte at a time too


def test_no_piece_is_larger_than_the_bound_however_well_the_body_packs() -> None:
    zeros = bytes(50_000_000)
    pieces = _unpacked(["gzip", "gzip"], gzip.compress(gzip.compress(zeros)), max_bytes=60_000_000, chunk=65_536)
    assert sum(map(len, pieces)) == len(zeros)
    assert max(map(len, pieces)) <= PIECE


def test_the_limit_stops_unpacking_as_soon_as_it_is_passed() -> None:
    decoder = BodyDecoder(["gzip"], 100_000)
    seen = 0
    with pytest.raises(PageTooLargeError, match=r"larger than 0\.1 MB"):
        for piece in decoder.feed(gzip.compress(bytes(10_000_000))):
            seen += len(piece)
    assert seen <= 100_000


def test_identity_and_empty_layers_are_no_layers() -> None:
    assert codings(["identity", " GZIP ", ""]) == ["gzip"]


@pytest.mark.parametrize(("values", "reason"), [(["br"], "packed as br"), (["gzip", "gzip", "deflate"], "3 times")])
def test_what_cannot_be_unpacked_is_refused(values: list[str], reason: str) -> None:
    with pytest.raises(PageFetchError, match=reason):
        codings(values)
