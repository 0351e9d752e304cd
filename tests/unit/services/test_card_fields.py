"""What a person types into a card: tags split, tags renamed in place, fields said in a sentence."""

from __future__ import annotations

from san_desktop.services.card_fields import fields_phrase, renamed_tags, split_tags


def test_a_tag_typed_over_in_place_is_a_rename_and_a_repeat_it_makes_is_kept_for_it() -> None:
    before = ("SQLite", "SQLite database")
    assert renamed_tags(before, "SQLite, SQLite") == [("SQLite database", "SQLite")]  # merged on this card
    assert renamed_tags(before, "sqlite, SQLite database") == [("SQLite", "sqlite")]  # respelled
    assert split_tags("SQLite, SQLite") == ("SQLite",)


def test_a_tag_added_or_removed_is_no_rename() -> None:
    before = ("SQLite", "SQLite database")
    assert renamed_tags(before, "SQLite") == []
    assert renamed_tags(before, "SQLite, SQLite database, WAL") == []
    assert renamed_tags(before, "#SQLite,  SQLite database ,") == []


def test_fields_are_said_as_a_sentence_says_them() -> None:
    assert fields_phrase(("title",)) == "title"
    assert fields_phrase(("title", "tags")) == "title and tags"
    assert fields_phrase(("title", "summary", "tags", "category")) == "title, summary, tags and category"
