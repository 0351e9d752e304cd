"""What the Anki export makes of names and text: deck names and ids, tags, fields, and a card's back and
source."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from san_desktop.transfer.anki_export import (
    TEXT_MAX_CHARS,
    ScrapSource,
    anki_tag,
    back_field,
    deck_id,
    deck_name,
    field_text,
    source_field,
)
from san_desktop.transfer.library import ExportCard

NOW = datetime(2026, 12, 5, tzinfo=UTC)


def _card(category: str | None) -> ExportCard:
    return ExportCard("c1", "제목", "요약", category, (), "TEXT", None, NOW, NOW, NOW)


def _from(source_type: str, source_ref: str | None, title: str = "Card <title>") -> ExportCard:
    return ExportCard("c1", title, "The summary.", None, (), source_type, source_ref, NOW, NOW, NOW)


def test_a_deck_per_category_under_san_and_one_for_cards_without() -> None:
    assert deck_name(_card("Databases")) == "SAN::Databases"
    assert deck_name(_card("AI/ML")) == "SAN::AI/ML"
    assert deck_name(_card(None)) == "SAN::Uncategorised"
    assert deck_name(_card("  ")) == "SAN::Uncategorised"
    assert deck_name(_card("C++::Templates")) == "SAN::C++:Templates"  # not a sub-deck


def test_a_decks_id_is_the_same_every_time_and_in_ankis_range() -> None:
    names = ["SAN::Databases", "SAN::데이터베이스", "SAN::Uncategorised"]
    ids = [deck_id(name) for name in names]
    assert ids == [deck_id(name) for name in names]
    assert len(set(ids)) == len(ids)
    assert all(1 << 30 <= ident < 1 << 31 for ident in ids)


def test_tags_lose_their_spaces_and_fields_are_escaped_html() -> None:
    assert anki_tag(" build cache ") == "build_cache"
    assert anki_tag("한국어\t태그") == "한국어_태그"
    assert field_text('a < b & "c"\n둘째 줄') == "a &lt; b &amp; &quot;c&quot;<br>둘째 줄"


def test_a_web_pages_source_is_its_title_and_a_link_to_it() -> None:
    address = "https://example.org/a?b=1&c=2"
    field = source_field(_from("URL", address), ScrapSource('Page "one" & <two>', "text"))
    escaped = "https://example.org/a?b=1&amp;c=2"
    assert field == f'<b>Page &quot;one&quot; &amp; &lt;two&gt;</b><br><a href="{escaped}">{escaped}</a>'


def test_a_captured_page_without_a_title_is_named_by_its_card_and_an_untitled_link_by_its_address() -> None:
    page = source_field(_from("HTML", "http://example.org/"), ScrapSource(None, "text"))
    assert page == '<b>Card &lt;title&gt;</b><br><a href="http://example.org/">http://example.org/</a>'
    link = source_field(_from("URL", "http://example.org/", title="http://example.org/"), ScrapSource(None, ""))
    assert link == '<a href="http://example.org/">http://example.org/</a>'


@pytest.mark.parametrize(
    ("source_ref", "shown"),
    [
        ("javascript:alert(1)", "<b>Card &lt;title&gt;</b><br>javascript:alert(1)"),
        ("https://example.org/<script>", "<b>Card &lt;title&gt;</b><br>https://example.org/&lt;script&gt;"),
        ("notes/<a>.md", "<b>Card &lt;title&gt;</b><br>notes/&lt;a&gt;.md"),
        (None, "<b>Card &lt;title&gt;</b>"),
    ],
)
def test_what_is_no_web_address_is_plain_text(source_ref: str | None, shown: str) -> None:
    assert source_field(_from("FILE", source_ref), ScrapSource(None, "text")) == shown


def test_the_back_is_the_summary_then_the_escaped_text() -> None:
    back = back_field(_from("TEXT", None), ScrapSource(None, "<script>x</script>\n  indented"))
    assert back == 'The summary.<hr><div class="text">&lt;script&gt;x&lt;/script&gt;<br>  indented</div>'
    assert back_field(_from("TEXT", None), ScrapSource(None, " The summary. ")) == "The summary."


def test_a_long_text_is_cut_and_says_so() -> None:
    whole = "가" * TEXT_MAX_CHARS + "THE END"
    back = back_field(_from("TEXT", None), ScrapSource(None, whole))
    assert "가" * TEXT_MAX_CHARS in back
    assert "THE END" not in back
    assert back.endswith("<br><br>[…] (cut here: the whole text is in SAN Desktop)</div>")
    kept = back_field(_from("TEXT", None), ScrapSource(None, "가" * TEXT_MAX_CHARS))
    assert "cut here" not in kept
