"""Full-text search, as each backend answers it from its own word indexes (``LibrarySearch``): every word
required, the title counting most, a short word found inside a longer one, a scrap's text by its words' starts,
deleted scraps never, a list limited to the scraps asked about."""

from __future__ import annotations

from san_desktop.db.backends.base import backend_of
from san_desktop.db.database import Database
from tests.conformance.cards import MODEL, add_card, add_vector, scrap_of, unit


def _cards(db: Database, search: str, scrap_ids: list[str] | None = None) -> list[str]:
    with db.engine.connect() as conn:
        return backend_of(conn).search.card_word_matches(conn, search, limit=10, scrap_ids=scrap_ids)


def _texts(db: Database, search: str, scrap_ids: list[str] | None = None) -> list[str]:
    with db.engine.connect() as conn:
        return backend_of(conn).search.text_word_matches(conn, search, limit=10, scrap_ids=scrap_ids)


def test_every_word_is_required_and_a_word_in_the_title_ranks_first(library: Database) -> None:
    in_summary = add_card(library, "Write-ahead logging", "A checkpoint copies pages back into the database file.")
    in_title = add_card(library, "Checkpoint starvation", "Readers that never stop keep the log growing.")
    add_card(library, "Dead tuples", "Vacuum frees the space of rows no transaction can see.")
    assert _cards(library, "checkpoint") == [in_title, in_summary]
    assert _cards(library, "checkpoint database") == [in_summary]
    assert _cards(library, "checkpoint zymurgy") == []


def test_a_short_word_is_found_inside_a_longer_one_in_any_script(library: Database) -> None:
    english = add_card(library, "Logging levels", "What to write at each level.")
    korean = add_card(library, "체크포인트 주기", "로그가 너무 커지지 않게 페이지를 파일로 옮긴다.")
    assert _cards(library, "log") == [english]
    assert _cards(library, "체크") == [korean]


def test_a_deleted_scraps_card_is_never_found(library: Database) -> None:
    live = add_card(library, "Isolation levels", "Read committed and serializable.")
    add_card(library, "Isolation anomalies", "Lost updates and write skew.", deleted=True)
    assert _cards(library, "isolation") == [live]
    assert _texts(library, "isolation") == [live]


def test_only_the_scraps_asked_about_are_searched(library: Database) -> None:
    first = add_card(library, "Raft elections", "A leader is elected by a majority.")
    second = add_card(library, "Raft logs", "Entries are replicated by the leader.")
    assert set(_cards(library, "raft")) == {first, second}
    assert _cards(library, "raft", [scrap_of(library, second)]) == [second]
    assert _texts(library, "leader", [scrap_of(library, first)]) == [first]


def test_a_scraps_text_is_found_by_the_start_of_its_words(library: Database) -> None:
    long_text = " ".join(["Notes from the database reading group."] * 20) + " Someone mentioned zymurgy."
    english = add_card(library, "Reading group", "Pages and the log.", long_text)
    korean = add_card(library, "필름 현상", "현상액의 온도", "현상액의 온도가 높으면 필름이 빨리 현상된다.")
    assert _cards(library, "zymurgy") == []  # not in the card: only in its scrap's text
    assert _texts(library, "zymurgy") == [english]
    assert _texts(library, "zymur") == [english]
    assert _texts(library, "현상액") == [korean]  # written with its particle: 현상액의


def test_the_cards_still_live_and_in_a_space_are_told_apart(library: Database) -> None:
    kept = add_card(library, "Kept", "In the space.")
    other_model = add_card(library, "Other", "In another space.")
    deleted = add_card(library, "Gone", "Its scrap was deleted.", deleted=True)
    never = add_card(library, "Never", "No vector at all.")
    add_vector(library, kept, unit([1.0]))
    add_vector(library, other_model, unit([1.0]), model="another-model")
    add_vector(library, deleted, unit([1.0]))
    with library.engine.connect() as conn:
        live = backend_of(conn).search.live_in_space(conn, [kept, other_model, deleted, never], MODEL)
    assert live == {kept}
