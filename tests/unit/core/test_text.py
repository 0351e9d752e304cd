from __future__ import annotations

import pytest

from san_desktop.core.text import (
    RejectedContentError,
    check_capturable,
    content_hash,
    decode_bytes,
    format_size,
    html_to_text,
    normalize,
    terminal_safe,
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
    assert text.startswith("# WAL & checkpoints\n\nReaders keep reading.")  # the heading on its own line
    assert "Readers keep reading." in text
    assert "- one\n- two" in text
    assert "  code  kept\n    as is" in text


# --- hardening: invisible text, surrogates, sizes, terminal output ------------------------------


@pytest.mark.parametrize(
    "text",
    ["\u200b\u200c\u200d", "\u202e\u202d\u2066", "\x01\x02\x1b", " \ufeff \u00ad ", "\u2060\n\t\u200b"],
)
def test_text_of_only_invisible_or_control_characters_is_refused(text: str) -> None:
    with pytest.raises(RejectedContentError, match="only invisible or control characters"):
        check_capturable(text)


def test_a_lone_surrogate_is_refused_as_invalid_text() -> None:
    with pytest.raises(RejectedContentError, match="not valid text"):
        check_capturable("caf\udce9 au lait")


def test_sizes_just_over_the_limit_do_not_read_as_the_limit() -> None:
    with pytest.raises(RejectedContentError) as refused:
        check_capturable("a" * 1_000_001, max_bytes=1_000_000)
    message = str(refused.value)
    assert "1.000001 MB, the limit is 1.000000 MB" in message
    assert format_size(2_500_000) == "2.5 MB"


@pytest.mark.parametrize(
    ("dangerous", "kept"),
    [
        ("title\x1b]0;owned\x07 rest", "title rest"),  # set the window title
        ("clear\x1b[2Jscreen", "clearscreen"),  # erase the screen
        ("copy\x1b]52;c;ZWNobyBvd25lZA==\x07me", "copyme"),  # OSC 52: write the clipboard
        ("link\x1b]8;;http://evil\x1b\\text\x1b]8;;\x1b\\", "linktext"),  # hyperlink
        ("csi\x9b31mred", "csired"),  # 8-bit CSI
        ("bidi\u202eevil\u202c", "bidievil"),
        ("bell\x07 and back\x08space\r", "bell and backspace"),
    ],
)
def test_terminal_output_is_inert(dangerous: str, kept: str) -> None:
    assert terminal_safe(dangerous) == kept


def test_terminal_output_keeps_lines_tabs_and_korean() -> None:
    assert terminal_safe("한국어\n\tindented") == "한국어\n\tindented"
    assert terminal_safe("bad \udcff byte") == "bad \ufffd byte"
