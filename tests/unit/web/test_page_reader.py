"""How much text a page shows, told before it is parsed (``web.page_reader.visible_text_size``): scripts,
styles and tags left out, in one pass whatever the markup (no input makes it slow)."""

from __future__ import annotations

import pytest

from san_desktop.web.page_reader import visible_text_size


@pytest.mark.parametrize(
    ("markup", "size"),
    [
        ("<p>Raft   elects\n a leader.</p>", len("Raft elects a leader.")),
        ("<script>var a = '<p>not text</p>';</script><p>text</p>", len("text")),
        ("<STYLE>p { color: red }</Style ><p>text</p>", len("text")),
        ("<svg><text>a label</text></svg><noscript>enable it</noscript><template>t</template>x", 1),
        ("<p>한글</p>", len("한글".encode())),
        ("a < b", len("a < b")),  # (a "<" with no ">" after it is text)
        ("<p>before</p><script>never closed <p>hidden", len("before")),
        ("", 0),
    ],
)
def test_the_text_a_page_shows_is_counted_in_bytes(markup: str, size: int) -> None:
    assert visible_text_size(markup) == size


@pytest.mark.parametrize(
    "markup",
    [
        "<" * 2_000_000,  # a tag that never closes, at every position
        "<script" * 300_000,  # elements that never close
        "<script></script>" * 200_000,
        "<p>" * 1_000_000,
    ],
)
def test_hostile_markup_is_scanned_in_one_pass(markup: str) -> None:
    # a pattern that backtracks takes minutes over these (the first one did, written as <[^>]*>)
    assert visible_text_size(markup) >= 0
