"""``san scrap``, ``san cards`` and ``san config`` in child processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from san_desktop.app import SanApp
from san_desktop.core.enums import JobType
from san_desktop.db.database import Database
from san_desktop.queue.store import JobStore
from tests.support.jobs import fast_settings, jobs_of
from tests.support.pages import ARTICLE_TITLE, website
from tests.support.processes import child_env, run_san

TEXT = "SQLite WAL mode lets readers continue while a writer commits."


def test_eight_concurrent_adds_of_the_same_text_make_one_scrap_and_one_analysis(db: Database) -> None:
    command = [sys.executable, "-m", "san_desktop.cli.main", "scrap", "add", "--json", "--text", TEXT]
    children = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env())
        for _ in range(8)
    ]
    results = []
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        results.append(json.loads(out))
    assert len({r["scrap_id"] for r in results}) == 1
    assert sum(r["created"] for r in results) == 1
    jobs = jobs_of(JobStore(db, fast_settings()))
    assert [j.job_type for j in jobs].count(JobType.CARD_ANALYSIS) == 1
    assert [j.job_type for j in jobs].count(JobType.SCRAP_REFINE) == 1


def test_add_list_run_cards_delete_restore(tmp_path: Path) -> None:
    added = run_san("scrap", "add", "--text", TEXT)
    assert added.returncode == 0, added.stderr
    scrap_id = added.stdout.split()[1]
    assert run_san("scrap", "add", "--text", TEXT).stdout.strip() == f"duplicate of {scrap_id}"
    korean = subprocess.run(
        [sys.executable, "-m", "san_desktop.cli.main", "scrap", "add", "-"],
        input="리액트 훅은 함수 컴포넌트에서 상태를 관리하게 해준다.",
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=60,
        check=False,
    )
    assert korean.returncode == 0, korean.stderr
    note = tmp_path / "note.md"
    note.write_text("Write-ahead logging: a checkpoint copies WAL pages into the database.", encoding="utf-8")
    assert run_san("scrap", "add", "--file", str(note)).returncode == 0

    assert run_san("jobs", "run", "--until-idle", "--timeout", "60").returncode == 0
    cards = json.loads(run_san("cards", "list", "--json").stdout)
    assert len(cards) == 3
    wal = next(card for card in cards if card["title"].startswith("SQLite WAL"))
    shown = json.loads(run_san("cards", "show", wal["id"], "--json").stdout)
    assert shown["content"] == TEXT
    similar = json.loads(run_san("cards", "similar", wal["id"], "--json").stdout)
    assert {item["card"]["id"] for item in similar} == {c["id"] for c in cards if c["id"] != wal["id"]}
    assert similar[0]["card"]["title"].startswith("Write-ahead logging")  # the related one first

    listed = run_san("scrap", "list")
    assert "SQLite WAL mode" in listed.stdout
    deleted = run_san("scrap", "delete", scrap_id)
    assert f"san scrap restore {scrap_id}" in deleted.stdout
    assert len(json.loads(run_san("cards", "list", "--json").stdout)) == 2
    assert run_san("scrap", "restore", scrap_id).returncode == 0
    assert run_san("scrap", "delete", "no-such-scrap").returncode == 5


def test_rejections_exit_non_zero_with_a_message(tmp_path: Path) -> None:
    empty = run_san("scrap", "add", "--text", "  ")
    assert empty.returncode == 1
    assert "empty" in empty.stderr
    binary = tmp_path / "x.txt"
    binary.write_bytes(b"\x00\x01" * 50)
    refused = run_san("scrap", "add", "--file", str(binary))
    assert refused.returncode == 1
    assert "binary" in refused.stderr


def test_config_set_show_and_the_api_key_from_stdin() -> None:
    assert run_san("config", "set", "ai.provider", "openai").returncode == 0
    assert run_san("config", "set", "ai.timeout_seconds", "300").returncode == 0
    bad = run_san("config", "set", "ai.provider", "skynet")
    assert bad.returncode == 1
    assert "must be one of" in bad.stderr
    leaked = run_san("config", "set", "ai.api_key", "sk-never-on-the-command-line")
    assert leaked.returncode == 1
    assert "never taken from the command line" in leaked.stderr
    shown = json.loads(run_san("config", "show", "--json").stdout)
    assert shown["ai"]["provider"] == "openai"
    assert shown["ai"]["timeout_seconds"] == 300.0
    assert shown["ai"]["api_key"] == "not set"
    # children have no keyring backend (tests never touch a real one): storing a key explains why not
    stored = subprocess.run(
        [sys.executable, "-m", "san_desktop.cli.main", "config", "set", "ai.api_key"],
        input="sk-from-stdin\n",
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=60,
        check=False,
    )
    assert stored.returncode == 1
    assert "The API key was not stored: no system keyring can keep it safely here" in stored.stderr
    assert "Set OPENAI_API_KEY" in stored.stderr
    assert "sk-from-stdin" not in stored.stderr


def test_a_link_added_from_the_command_line_becomes_its_page_then_its_card() -> None:
    with website() as site:
        added = run_san("scrap", "add", "--url", site.url("/post/raft?utm_source=cli"))
        assert added.returncode == 0, added.stderr
        assert "the page is fetched, then its card is made" in added.stdout
        again = run_san("scrap", "add", "--url", site.url("/post/raft/"))
        assert again.stdout.startswith("duplicate of ")
        assert "fetching the page" in run_san("scrap", "list").stdout
        assert run_san("jobs", "run", "--until-idle", "--timeout", "60").returncode == 0
        (card,) = json.loads(run_san("cards", "list", "--json").stdout)
        assert card["title"] == ARTICLE_TITLE

        failed = run_san("scrap", "add", "--url", site.url("/missing"))
        scrap_id = failed.stdout.split()[1]
        assert run_san("jobs", "run", "--until-idle", "--timeout", "60").returncode == 0
    listed = run_san("scrap", "list").stdout
    assert "Page not fetched: The page was not found (HTTP 404)." in listed, listed
    analysed = run_san("scrap", "analyse", scrap_id)
    assert analysed.returncode == 0, analysed.stderr
    assert run_san("jobs", "run", "--until-idle", "--timeout", "60").returncode == 0
    assert len(json.loads(run_san("cards", "list", "--json").stdout)) == 2  # the link's card from its address


MORE = "not shown: add `--limit N` to see N, or `--all`.\n"


def test_scrap_list_says_how_many_more_there_are_and_all_lists_them(app: SanApp) -> None:
    """Issue 38, item 15: the list stopped at 50 rows without a word."""
    for n in range(52):
        app.capture_text(f"Scrap number {n}: a checkpoint copies WAL pages back.")
    cut = run_san("scrap", "list")
    assert cut.returncode == 0, cut.stderr
    assert len(cut.stdout.splitlines()) == 1 + 50  # the header, then the newest 50
    assert "Scrap number 51" in cut.stdout
    assert "Scrap number 1:" not in cut.stdout
    assert cut.stderr == f"2 more scraps {MORE}"
    assert run_san("scrap", "list", "--limit", "51").stderr == f"1 more scrap {MORE}"
    as_json = run_san("scrap", "list", "--limit", "10", "--json")
    assert len(json.loads(as_json.stdout)) == 10  # standard output stays the list
    assert as_json.stderr == f"42 more scraps {MORE}"

    everything = run_san("scrap", "list", "--all")
    assert everything.returncode == 0, everything.stderr
    assert len(everything.stdout.splitlines()) == 1 + 52
    assert everything.stderr == ""
    both = run_san("scrap", "list", "--all", "--limit", "3")
    assert both.returncode == 2
    assert "not allowed with argument" in both.stderr
