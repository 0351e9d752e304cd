"""Unpacking a response's Content-Encoding within the size limit (issue 23). httpx inflates each chunk it
reads all at once: a 10 KB body sent as "gzip, gzip" inflates to 4 GiB in one call. Here the raw bytes are
inflated at most ``PIECE`` bytes per call, every layer's output is counted against the limit as it comes, and
more than ``MAX_LAYERS`` layers are refused.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator

from san_desktop.web.errors import PageFetchError, PageTooLargeError

ACCEPT_ENCODING = "gzip, deflate"  # what is unpacked here (not br: its library is not installed)
MAX_LAYERS = 2
PIECE = 64 * 1024
_GZIP = ("gzip", "x-gzip")


def codings(header_values: Iterable[str]) -> list[str]:
    """The Content-Encoding layers of a response, in the order they were applied; refuses what cannot be
    unpacked here."""
    layers = [value.strip().lower() for value in header_values]
    layers = [layer for layer in layers if layer and layer != "identity"]
    for layer in layers:
        if layer not in (*_GZIP, "deflate"):
            raise PageFetchError(
                f"The server sent the page packed as {layer}, which SAN Desktop cannot unpack "
                f"(it asks for {ACCEPT_ENCODING})."
            )
    if len(layers) > MAX_LAYERS:
        raise PageFetchError(
            f"The server packed the page {len(layers)} times ({', '.join(layers)}); SAN Desktop unpacks "
            f"at most {MAX_LAYERS} layers."
        )
    return layers


class BodyDecoder:
    """Raw body bytes in, the page's bytes out, piece by piece: ``feed`` each chunk as it arrives."""

    def __init__(self, layers: list[str], max_bytes: int) -> None:
        self._layers = [_Layer(layer, max_bytes) for layer in reversed(layers)]  # the last applied first

    def feed(self, raw: bytes) -> Iterator[bytes]:
        pieces: Iterable[bytes] = (raw,)
        for layer in self._layers:  # lazily chained: one piece per layer in memory at a time
            pieces = layer.inflate_all(pieces)
        return iter(pieces)


class _Layer:
    def __init__(self, coding: str, max_bytes: int) -> None:
        self.coding = coding
        self.max_bytes = max_bytes
        self.produced = 0
        self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS) if coding in _GZIP else None
        self._head = b""  # deflate: its first two bytes tell a zlib stream from a raw one (both are sent)

    def inflate_all(self, pieces: Iterable[bytes]) -> Iterator[bytes]:
        for piece in pieces:
            yield from self.inflate(piece)

    def inflate(self, data: bytes) -> Iterator[bytes]:
        if self._inflater is None:
            self._head += data
            if len(self._head) < 2:
                return
            data, self._head = self._head, b""
            self._inflater = zlib.decompressobj(zlib.MAX_WBITS if _is_zlib_header(data) else -zlib.MAX_WBITS)
        inflater = self._inflater
        while not inflater.eof:  # (what follows the end of the stream is ignored)
            try:
                piece = inflater.decompress(data, PIECE)
            except zlib.error as exc:
                raise PageFetchError(f"The server sent the page as damaged {self.coding} data.") from exc
            data = inflater.unconsumed_tail
            self.produced += len(piece)
            if self.produced > self.max_bytes:
                raise PageTooLargeError(self.max_bytes)
            if piece:
                yield piece
            if len(piece) < PIECE and not data:  # all input used and nothing held back
                return


def _is_zlib_header(data: bytes) -> bool:
    return data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0  # RFC 1950: deflate, checksum ok
