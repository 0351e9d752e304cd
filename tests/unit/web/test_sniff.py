"""Binary bodies are not pages, whatever their label (issue 23); pages in any common encoding are."""

from __future__ import annotations

import codecs

import pytest

from san_desktop.web.sniff import binary_kind

PAGE = "<!doctype html><html><head><title>래프트</title></head><body><p>Raft 합의</p></body></html>"


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (b"\x7fELF\x02\x01\x01", "an ELF program"),
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "a PDF document"),
        (b"PK\x03\x04\x14\x00", "a ZIP archive"),
        (b"\x1f\x8b\x08\x00", "gzip data"),
        (b"\x89PNG\r\n\x1a\n", "a PNG image"),
        (b"\xff\xd8\xff\xe0", "a JPEG image"),
        (b"BZh91AY&SY\x12", "a bzip2 archive"),
        (b"SQLite format 3\x00", "an SQLite database"),
        (b"<html>\x00\x01\x02", "binary data"),  # a NUL in what claims to be markup
    ],
)
def test_binary_bodies_are_named(head: bytes, kind: str) -> None:
    assert binary_kind(head, None) == kind


@pytest.mark.parametrize(
    ("body", "charset"),
    [
        (PAGE.encode(), None),
        (PAGE.encode(), "utf-8"),
        (PAGE.encode("euc-kr"), "euc-kr"),
        (PAGE.encode("euc-kr"), None),
        (codecs.BOM_UTF16_LE + PAGE.encode("utf-16-le"), None),
        (PAGE.encode("utf-16-be"), "UTF-16BE"),  # no BOM, but the server names it
        (b"BZh is how a bzip2 file starts, says this plain-text page.", None),
        (b"", None),
    ],
)
def test_pages_are_text(body: bytes, charset: str | None) -> None:
    assert binary_kind(body, charset) is None
