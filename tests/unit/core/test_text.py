from __future__ import annotations

import pytest

from san_desktop.core.text import (
    RejectedContentError,
    check_capturable,
    content_hash,
    decode_bytes,
    html_to_text,
    normalize,
)


def test_normalize_unifies_line_endings_and_trims() -> None:
    assert normalize("  a\r\nb\rc\n\n ") == "a\nb\nc"
    assert content_hash(normalize("x\r\n")) == content_hash(normalize("x\n"))


@pytest.mark.parametrize("text", ["", "   \n\t  ", "\r\n"])
def test_empty_content_is_rejected(text: str) -> None:
    with pytest.raises(RejectedContentError, match="empty"):
        check_capturable(text)


def test_oversized_content_is_rejected_with_the_limit() -> None:
    with pytest.raises(RejectedContentError, match="the limit is"):
        check_capturable("x" * 2000, max_bytes=1000)


def test_decoding_text_files() -> None:
    assert decode_bytes("héllo".encode()) == "héllo"
    assert decode_bytes(b"\xef\xbb\xbfbom") == "bom"
    assert decode_bytes("한글".encode("utf-16")) == "한글"
    assert decode_bytes("한글 텍스트".encode("cp949")) == "한글 텍스트"
    with pytest.raises(RejectedContentError, match="binary"):
        decode_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image.png")
    with pytest.raises(RejectedContentError, match="not valid UTF-8"):
        decode_bytes(bytes([0x80, 0x81, 0xFE, 0xFD, 0xC0]) * 3, "odd.txt")
    with pytest.raises(RejectedContentError, match="binary file"):  # a UTF-16 mark on junk
        decode_bytes(b"\xff\xfe" + bytes([0x00, 0xD8, 0x01, 0x00]) * 4, "odd-utf16.txt")


def test_html_becomes_readable_text() -> None:
    markup = (
        "<html><head><style>p{}</style><script>alert(1)</script></head><body>"
        "<h1>WAL &amp; checkpoints</h1><p>Readers   keep\nreading.</p><ul><li>one</li><li>two</li></ul>"
        "<pre>  code  kept\n    as is</pre></body></html>"
    )
    text = html_to_text(markup)
    assert "alert" not in text
    assert text.startswith("WAL & checkpoints")
    assert "Readers keep reading." in text
    assert "- one\n- two" in text
    assert "  code  kept\n    as is" in text
