"""``san cards edit``, ``show`` (edited fields marked), ``analyse`` and ``rename-tag``, in child processes
beside the test's own facade (as the command line runs beside an open window)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from san_desktop.app import SanApp
from san_desktop.core.enums import JobPool, JobStatus, JobType
from tests.support.jobs import jobs_of
from tests.support.processes import run_san
from tests.support.til import cards_of, executor

DOCKER = "Docker multi-stage builds keep images small: build in one stage, copy the binary out."
WAL = "SQLite WAL mode lets readers continue while a writer commits. Checkpoints copy pages back."
WAL2 = "Write-ahead logging in SQLite: a checkpoint moves WAL pages into the database file."


def _card_of(app: SanApp, text: str) -> str:
    (card_id,) = [card.id for card in app.cards.list_cards() if app.cards.get(card.id).content == text]
    return card_id


def _shown(card_id: str) -> dict[str, Any]:
    result = run_san("cards", "show", card_id, "--json")
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_edit_all_four_fields_then_show_marks_them(app: SanApp) -> None:
    cards_of(app, [DOCKER])
    card_id = _card_of(app, DOCKER)

    edited = run_san(
        "cards", "edit", card_id,
        "--title", "Docker layer cache",
        "--summary", "Layers that did not change are reused.",
        "--tags", "Docker, build cache",
        "--category", "architecture/design",
    )  # fmt: skip

    assert edited.returncode == 0, edited.stderr
    assert edited.stdout.splitlines()[0] == f"Card {card_id} edited: title, summary, tags and category."
    assert "new vector" in edited.stdout
    card = _shown(card_id)["card"]
    assert (card["title"], card["summary"], card["tags"], card["category"]) == (
        "Docker layer cache",
        "Layers that did not change are reused.",
        ["build cache", "Docker"],
        "Architecture/Design",
    )
    assert card["edited"] == ["title", "summary", "tags", "category"]
    shown = run_san("cards", "show", card_id)
    assert shown.stdout.splitlines()[:2] == ["Docker layer cache", "Architecture/Design · build cache, Docker"]
    assert "Edited by you: title, summary, tags and category." in shown.stdout
    assert app.cards.get(card_id).card.title == "Docker layer cache"  # the facade beside it reads it too
    assert [job.payload for job in jobs_of(app.queue, JobType.CARD_ANALYSIS, statuses=(JobStatus.PENDING,))] == [
        '{"embed_only": true, "replace_edits_as_of": null}'
    ]


def test_a_card_not_edited_shows_no_mark(app: SanApp) -> None:
    cards_of(app, [DOCKER])
    shown = run_san("cards", "show", _card_of(app, DOCKER))
    assert shown.returncode == 0, shown.stderr
    assert "Edited by you" not in shown.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--category", "Frontnd"], "There is no category “Frontnd”. Choose one of: Frontend, Backend, Programming"),
        (["--tags", "a,b,c,d,e,f"], "A card has at most 5 tags; you gave 6: a, b, c, d, e, f."),
        (["--title", "  "], "A card needs a title: the title given is empty."),
        ([], "Nothing to change: give a new title, summary, tags or category."),
    ],
)
def test_a_bad_edit_exits_1_with_a_sentence_and_changes_nothing(app: SanApp, args: list[str], message: str) -> None:
    cards_of(app, [DOCKER])
    card_id = _card_of(app, DOCKER)
    before = app.cards.get(card_id)
    result = run_san("cards", "edit", card_id, *args)
    assert result.returncode == 1
    assert result.stderr.startswith(f"san: {message}")
    assert "Error" not in result.stderr
    assert app.cards.get(card_id) == before


def test_an_unknown_card_exits_5(app: SanApp) -> None:
    result = run_san("cards", "edit", "no-such-card", "--title", "T")
    assert result.returncode == 5
    assert result.stderr.strip() == "san: There is no card with id no-such-card."


def test_a_title_starting_with_a_dash_is_taken_as_the_title(app: SanApp) -> None:
    cards_of(app, [DOCKER])
    card_id = _card_of(app, DOCKER)
    result = run_san("cards", "edit", card_id, "--title", "-v means verbose")
    assert result.returncode == 0, result.stderr
    assert _shown(card_id)["card"]["title"] == "-v means verbose"


def test_an_edit_that_changes_nothing_says_so(app: SanApp) -> None:
    cards_of(app, [DOCKER])
    card_id = _card_of(app, DOCKER)
    title = app.cards.get(card_id).card.title
    result = run_san("cards", "edit", card_id, "--title", title)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Nothing changed: the card already says that."


def test_analyse_again_keeps_the_edits_unless_told_to_replace_them(app: SanApp) -> None:
    cards_of(app, [DOCKER])
    card_id = _card_of(app, DOCKER)
    analysed_title = app.cards.get(card_id).card.title
    assert run_san("cards", "edit", card_id, "--title", "Docker layer cache").returncode == 0
    executor(app).drain(JobPool.AI)  # its new vector

    kept = run_san("cards", "analyse", card_id)
    assert kept.returncode == 0, kept.stderr
    assert "Your edits of its title are kept (--replace-edits replaces them)." in kept.stdout
    executor(app).drain(JobPool.AI)
    assert _shown(card_id)["card"]["title"] == "Docker layer cache"

    replaced = run_san("cards", "analyse", card_id, "--replace-edits")
    assert replaced.returncode == 0, replaced.stderr
    executor(app).drain(JobPool.AI)
    card = _shown(card_id)["card"]
    assert card["title"] == analysed_title
    assert card["edited"] == []


def test_rename_tag_renames_it_on_every_card(app: SanApp) -> None:
    cards_of(app, [WAL, WAL2])
    result = run_san("cards", "rename-tag", "SQLite WAL", "SQLite")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Renamed the tag “SQLite WAL” to “SQLite” on 1 card."
    assert all("SQLite WAL" not in card.tags for card in app.cards.list_cards())
    missing = run_san("cards", "rename-tag", "no-such-tag", "x")
    assert missing.returncode == 1
    assert missing.stderr.strip() == "san: There is no tag “no-such-tag”."


def test_a_tag_typed_in_another_spelling_is_said_to_keep_its_own(app: SanApp) -> None:
    cards_of(app, [WAL, WAL2])
    card_id = _card_of(app, WAL)
    result = run_san("cards", "edit", card_id, "--tags", "sqlite, WAL")
    assert result.returncode == 0, result.stderr
    assert "The tag “sqlite” is spelled “SQLite” (a tag has one spelling" in result.stdout
    assert _shown(card_id)["card"]["tags"] == ["SQLite", "WAL"]


def test_san_search_finds_by_meaning_across_languages_and_says_where(app: SanApp) -> None:
    from tests.integration.services.test_similar_meaning import ENGLISH, KOREAN

    cards_of(app, [ENGLISH["isolation"], ENGLISH["docker"], KOREAN["film"]])
    isolation = _card_of(app, ENGLISH["isolation"])
    found = run_san("search", "트랜잭션", "격리", "--json")
    assert found.returncode == 0, found.stderr
    results = json.loads(found.stdout)
    assert results[0]["card"]["id"] == isolation
    assert results[0]["matched"] == ["meaning"]
    table = run_san("search", "트랜잭션 격리")
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[0].split()[:3] == ["ID", "FOUND", "BY"]
    assert isolation in table.stdout.splitlines()[1]
    assert "meaning" in table.stdout.splitlines()[1]
    nothing = run_san("search", "zebra", "crossing")
    assert nothing.returncode == 0, nothing.stderr
    assert nothing.stdout.strip() == "Nothing found for “zebra crossing”."


def test_san_search_lists_the_days_whose_til_note_it_finds_after_the_cards(app: SanApp) -> None:
    from tests.support.til import finished_til

    day = finished_til(app, [WAL, DOCKER])
    found = run_san("search", "checkpoints", "--json")
    assert found.returncode == 0, found.stderr
    results = json.loads(found.stdout)
    assert results[0]["card"]["id"] == _card_of(app, WAL)
    (til,) = [item for item in results if "til" in item]
    assert results[-1] is til
    assert til["til"]["local_date"] == day
    assert "til" in til["matched"]
    table = run_san("search", "checkpoints")
    assert table.returncode == 0, table.stderr
    last = table.stdout.splitlines()[-1]
    assert last.startswith(f"TIL {day}")
    assert "the TIL's text" in last


def test_cards_list_says_when_there_are_more_and_all_lists_them(app: SanApp) -> None:
    """Issue 38, item 15: the list stopped at its limit (50) without a word."""
    cards_of(app, [DOCKER, WAL, WAL2])
    more = "not shown: add `--limit N` to see N, or `--all`.\n"
    cut = run_san("cards", "list", "--limit", "2")
    assert cut.returncode == 0, cut.stderr
    assert len(cut.stdout.splitlines()) == 1 + 2
    assert cut.stderr == f"1 more card {more}"
    everything = run_san("cards", "list", "--all", "--json")
    assert len(json.loads(everything.stdout)) == 3
    assert everything.stderr == ""

    found = run_san("cards", "list", "--search", "SQLite", "--limit", "1")  # a search is not counted: "more"
    assert len(found.stdout.splitlines()) == 1 + 1
    assert found.stderr == "More cards match than these 1: add `--limit N` to see N, or `--all`.\n"
    found_all = run_san("cards", "list", "--search", "SQLite", "--all")
    assert len(found_all.stdout.splitlines()) > 1 + 1
    assert found_all.stderr == ""
    assert run_san("cards", "list").stderr == ""  # 3 of 3: nothing to say
