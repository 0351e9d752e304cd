"""Telling a binary body from a page whatever the server calls it (issue 23): a program or an archive
labelled text/html, or sent with no Content-Type at all, must not become a scrap and a card.

A body is binary when it starts with a known file signature or has a NUL byte in its first ``SNIFF_BYTES``
(no HTML or plain text in UTF-8, EUC-KR or any other single- or multi-byte page encoding has one). UTF-16 and
UTF-32 pages have NULs in every ASCII character: they count as text when they start with their byte order
mark or the server names that charset.
"""

from __future__ import annotations

import codecs

SNIFF_BYTES = 4096
_SIGNATURES = (
    (b"\x7fELF", "an ELF program"),
    (b"MZ\x90\x00", "a Windows program"),
    (b"\xca\xfe\xba\xbe", "a Java class or macOS program"),
    (b"\xcf\xfa\xed\xfe", "a macOS program"),
    (b"\x00asm", "a WebAssembly module"),
    (b"%PDF-", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive"),
    (b"\x1f\x8b", "gzip data"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"\xfd7zXZ\x00", "an xz archive"),
    (b"Rar!\x1a\x07", "a RAR archive"),
    (b"BZh", "a bzip2 archive"),
    (b"\x28\xb5\x2f\xfd", "zstd data"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"\x1aE\xdf\xa3", "a Matroska or WebM video"),
    (b"SQLite format 3\x00", "an SQLite database"),
)
_WIDE_BOMS = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def binary_kind(head: bytes, charset: str | None) -> str | None:
    """What the start of a body (``SNIFF_BYTES`` or all of it) shows it to be when that is not text — "an ELF
    program", "binary data" — or None when it may be a page."""
    for signature, kind in _SIGNATURES:
        if head.startswith(signature) and (signature != b"BZh" or _bzip2(head)):
            return kind
    wide = head.startswith(_WIDE_BOMS) or (charset or "").lower().replace("_", "-").startswith(("utf-16", "utf-32"))
    if b"\x00" in head[:SNIFF_BYTES] and not wide:
        return "binary data"
    return None


def _bzip2(head: bytes) -> bool:
    """``BZh`` may begin a sentence: a bzip2 stream goes on with its block size and block magic."""
    return head[3:4] in b"123456789" and head[4:10] == b"1AY&SY"
