"""Every command that prints a list takes ``--limit N`` or ``--all`` and ``--json``, and says on stderr what its
limit left out (``cli.common.print_rows``)."""

from __future__ import annotations

import json

import pytest

from san_desktop.app import SanApp
from san_desktop.cli.main import build_parser, main

MORE = "not shown: add `--limit N` to see N, or `--all`.\n"
# every list command as a person types it, with its default --limit
LISTS = [
    (["scrap", "list"], 50),
    (["cards", "list"], 50),
    (["cards", "similar", "some-card"], 10),
    (["search", "vacuum"], 20),
    (["jobs", "list"], 50),
    (["jobs", "failures"], 50),
    (["til", "list"], 90),
    (["til", "commits", "2024-05-01"], 50),
    (["quiz", "due"], 50),
    (["stars", "recommend"], 20),
    (["trash", "list"], 50),
]


def _five_scraps(app: SanApp) -> list[str]:
    """Five scraps, newest last."""
    return [app.capture_text(f"Scrap {n}: VACUUM rewrites the database file.").value.scrap_id for n in range(5)]


@pytest.mark.parametrize(("typed", "default"), LISTS, ids=[" ".join(typed) for typed, _ in LISTS])
def test_every_list_takes_limit_all_and_json(typed: list[str], default: int) -> None:
    parser = build_parser()
    assert parser.parse_args(typed).limit == default
    assert parser.parse_args([*typed, "--limit", "7"]).limit == 7
    every = parser.parse_args([*typed, "--all", "--json"])
    assert every.limit is None
    assert every.json is True


def test_limit_shows_that_many_rows_and_says_how_many_more(app: SanApp, capsys: pytest.CaptureFixture[str]) -> None:
    ids = _five_scraps(app)
    assert main(["scrap", "list", "--limit", "2"]) == 0
    said = capsys.readouterr()
    header, *rows = said.out.splitlines()
    assert header.startswith("ID")
    assert [row.split()[0] for row in rows] == ids[:-3:-1]  # the newest two
    assert said.err == f"3 more scraps {MORE}"


def test_all_shows_every_row_and_says_nothing_more(app: SanApp, capsys: pytest.CaptureFixture[str]) -> None:
    ids = _five_scraps(app)
    assert main(["scrap", "list", "--all"]) == 0
    said = capsys.readouterr()
    assert [row.split()[0] for row in said.out.splitlines()[1:]] == ids[::-1]
    assert said.err == ""


def test_limit_and_all_together_are_refused_with_a_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as refused:
        main(["scrap", "list", "--limit", "2", "--all"])
    assert refused.value.code == 2
    said = capsys.readouterr()
    assert "argument --all: not allowed with argument --limit" in said.err
    assert said.out == ""


def test_json_is_the_rows_alone_with_the_limit_and_the_more_line_on_stderr(
    app: SanApp, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = _five_scraps(app)
    assert main(["scrap", "list", "--limit", "2", "--json"]) == 0
    said = capsys.readouterr()
    rows = json.loads(said.out)  # the whole of standard output
    assert isinstance(rows, list)
    assert [row["id"] for row in rows] == ids[:-3:-1]
    assert said.err == f"3 more scraps {MORE}"


def test_a_list_without_a_count_asks_one_more_and_says_there_are_more(
    app: SanApp, capsys: pytest.CaptureFixture[str]
) -> None:
    for scrap_id in _five_scraps(app)[:3]:  # an entry of the Trash each
        app.delete_scraps([scrap_id])
    assert main(["trash", "list", "--limit", "2", "--json"]) == 0
    said = capsys.readouterr()
    assert len(json.loads(said.out)) == 2
    assert said.err == "More entries than these 2: add `--limit N` to see N, or `--all`.\n"
    assert main(["trash", "list", "--limit", "3"]) == 0
    said = capsys.readouterr()
    assert len(said.out.splitlines()) == 1 + 3
    assert said.err == ""
