"""``san stars sync|recommend`` in child processes, against a GitHub-shaped server on 127.0.0.1: the token
from GH_TOKEN (a child has no keyring), the server from the github.api_url setting, cards made with
``san scrap add`` and ``san jobs run``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.github_server import TOKEN, FakeGitHub, fake_github_server
from tests.support.processes import run_san
from tests.support.stars import PER_TOPIC, STAR_CARDS, STAR_TOPICS, star_topics

NO_RUN_HINT = "`san stars sync`, then `san jobs run --until-idle`"


@pytest.fixture
def github(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    """The server, the setting pointing at it and the token in the children's environment."""
    with fake_github_server() as fake:
        configured = run_san("config", "set", "github.api_url", fake.url)
        assert configured.returncode == 0, configured.stderr
        monkeypatch.delenv("GITHUB_TOKEN", raising=False)
        monkeypatch.setenv("GH_TOKEN", TOKEN)
        yield fake


def _learn_sqlite_and_react() -> None:
    for text in STAR_CARDS:
        added = run_san("scrap", "add", "--text", text)
        assert added.returncode == 0, added.stderr
    _run_jobs()


def _run_jobs() -> None:
    ran = run_san("jobs", "run", "--until-idle", "--timeout", "90")
    assert ran.returncode == 0, ran.stderr


def _star_topics(github: FakeGitHub) -> None:
    star_topics(github)


def _recommend(*args: str) -> list[dict[str, Any]]:
    listed = run_san("stars", "recommend", "--json", *args)
    assert listed.returncode == 0, listed.stderr
    found: list[dict[str, Any]] = json.loads(listed.stdout)
    return found


def _job_id(out: str) -> str:
    found = re.search(r": job (\S+) is ", out)
    assert found, out
    return found.group(1)


def _topic(item: dict[str, Any]) -> str:
    return str(item["full_name"]).split("-")[0]


def test_sync_then_jobs_run_ranks_the_stars_against_the_cards(github: FakeGitHub) -> None:
    _learn_sqlite_and_react()
    _star_topics(github)

    synced = run_san("stars", "sync")
    assert synced.returncode == 0, synced.stderr
    assert " is waiting." in synced.stdout
    assert "`san jobs run --until-idle`" in synced.stdout
    assert _recommend() == []  # nothing fetched until the job runs
    _run_jobs()
    assert any(
        r.path == "/user/starred" and r.headers.get("Authorization") == f"Bearer {TOKEN}" for r in github.requests
    )

    ranked = _recommend("--limit", "100")
    card_titles = {card["title"] for card in json.loads(run_san("cards", "list", "--json").stdout)}
    assert len(card_titles) == len(STAR_CARDS)
    assert len(ranked) == len(STAR_TOPICS) * PER_TOPIC
    assert [item["rank"] for item in ranked] == list(range(1, len(ranked) + 1))
    scores = [item["score"] for item in ranked]
    assert scores == sorted(scores, reverse=True)
    for item in ranked[:5]:  # what is being learned comes first, each with the cards it matches
        assert _topic(item) in ("sqlite", "react"), item["full_name"]
        assert item["reason"].startswith("Close to your card")
        named = set(re.findall(r"“(.+?)”", item["reason"]))
        assert named, item["reason"]
        assert named <= card_titles, item["reason"]
    first = ranked[0]
    assert set(first) >= {"full_name", "description", "language", "topics", "stars", "html_url", "reason", "rank"}
    assert first["html_url"] == f"https://github.com/{first['full_name']}"
    assert isinstance(first["topics"], list)

    assert [item["full_name"] for item in _recommend("--limit", "3")] == [item["full_name"] for item in ranked[:3]]
    for language in ("python", "TYPESCRIPT", "c"):  # in any case, as people type it
        only = _recommend("--language", language, "--limit", "100")
        expected = [item for item in ranked if (item["language"] or "").casefold() == language.casefold()]
        assert [item["full_name"] for item in only] == [item["full_name"] for item in expected]
    assert len(_recommend("--language", "typescript")) == PER_TOPIC

    table = run_san("stars", "recommend", "--limit", "4")
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].startswith(f"From your {len(ranked)} starred repositories (synced ")
    header = next(line for line in lines if line.startswith("RANK"))
    assert header.split() == ["RANK", "REPOSITORY", "STARS", "LANGUAGE", "REASON", "URL"]
    rows = lines[lines.index(header) + 1 :]
    assert len(rows) == 4
    for row, item in zip(rows, ranked, strict=False):
        assert row.split()[0] == str(item["rank"])
        assert item["full_name"] in row
        assert row.endswith(item["html_url"])
        assert f"{item['stars']:,}" in row
    for row, item in zip(rows, ranked, strict=False):
        assert item["reason"] in row or "…" in row  # whole, or cut where it does not fit

    other = run_san("stars", "recommend", "--language", "cobol")
    assert other.returncode == 0, other.stderr
    assert "None of your starred repositories is in cobol" in other.stdout
    assert "TypeScript" in other.stdout


def test_a_second_sync_asks_conditionally_and_a_new_star_is_ranked(github: FakeGitHub) -> None:
    _learn_sqlite_and_react()
    _star_topics(github)
    assert run_san("stars", "sync").returncode == 0
    _run_jobs()
    before = len(github.requests)

    github.star("sqlite-org/sqlite-newest", STAR_TOPICS["sqlite"][0] + " (new)", ("sqlite",), language="C")
    full = run_san("stars", "sync", "--full")
    assert full.returncode == 0, full.stderr
    assert full.stdout.startswith("Full sync of your stars on ")
    again = run_san("stars", "sync")  # the waiting one is the one asked for: still the full sync
    assert again.stdout.startswith("Full sync of your stars on ")
    assert _job_id(full.stdout) == _job_id(again.stdout)  # the same job
    _run_jobs()
    asked = [r for r in github.requests[before:] if r.path == "/user/starred"]
    assert asked
    assert all(r.headers.get("If-None-Match") for r in asked)  # each page's ETag sent back
    names = [item["full_name"] for item in _recommend("--limit", "100")]
    assert len(names) == len(STAR_TOPICS) * PER_TOPIC + 1
    learned = [name for name in names if name.split("/")[0] in ("sqlite-org", "react-org")]
    assert len(learned) == 2 * PER_TOPIC + 1
    assert names.index("sqlite-org/sqlite-newest") < len(learned)  # among the topics being learned


def test_asking_for_a_full_sync_while_an_incremental_one_waits_says_so(github: FakeGitHub) -> None:
    assert run_san("stars", "sync").returncode == 0
    full = run_san("stars", "sync", "--full")
    assert full.returncode == 0, full.stderr
    assert full.stdout.startswith("Sync of your stars on ")
    assert "ask again with --full once it has run" in full.stdout


def test_sync_without_a_token_says_where_to_set_one(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    refused = run_san("stars", "sync")
    assert refused.returncode == 1
    assert "No GitHub token" in refused.stderr
    assert "GH_TOKEN" in refused.stderr  # a child has no keyring: the way that works there...
    assert "san github token set" not in refused.stderr  # ...and not the one that cannot
    assert "Traceback" not in refused.stderr
    assert refused.stdout == ""
    jobs = run_san("jobs", "list", "--json")
    assert jobs.returncode == 0, jobs.stderr
    assert json.loads(jobs.stdout) == []  # nothing was enqueued


def test_recommend_before_any_ranking_says_how_to_make_one(github: FakeGitHub) -> None:
    empty = run_san("stars", "recommend")
    assert empty.returncode == 0, empty.stderr
    assert "No recommendations yet: no starred repositories are synced." in empty.stdout
    assert NO_RUN_HINT in empty.stdout
    assert _recommend() == []

    _star_topics(github)  # synced, but no card to rank them against
    assert run_san("stars", "sync").returncode == 0
    _run_jobs()
    unranked = run_san("stars", "recommend")
    assert unranked.returncode == 0, unranked.stderr
    assert f"No recommendations yet from your {len(STAR_TOPICS) * PER_TOPIC} starred repositories" in unranked.stdout
    assert NO_RUN_HINT in unranked.stdout
