"""``san import`` in child processes: a dry run, an import with its progress line and summary, the bookmarks
file's links waiting for their pages, --list and --undo, and the refusals a person can act on."""

from __future__ import annotations

import json
from pathlib import Path

from san_desktop.core.enums import JobType
from san_desktop.db.database import Database
from san_desktop.queue.store import JobStore
from tests.support.jobs import fast_settings, jobs_of
from tests.support.processes import run_san

DATA = Path(__file__).parents[2] / "data" / "imports"


def _vault(folder: Path) -> Path:
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "raft.md").write_text("---\ntags: consensus\n---\nRaft elects a leader.\n", encoding="utf-8")
    (folder / "kafka.md").write_text("Kafka consumer groups share the partitions of a topic.", encoding="utf-8")
    return folder


def test_a_dry_run_then_an_import_then_its_undo(db: Database, tmp_path: Path) -> None:
    vault = _vault(tmp_path / "vault")
    dry = run_san("import", str(vault), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith(f"Would import 2 new scraps from {vault}.")
    assert dry.stderr == "Checking 2 of 2 (100%)\n"  # the progress, which says what a dry run does
    assert run_san("scrap", "list", "--json").stdout.strip() == "[]"

    done = run_san("import", str(vault), "--json")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # (the progress is not mixed into what a program reads)
    summary = json.loads(done.stdout)
    assert (summary["new"], summary["already_there"], summary["kind"]) == (2, 0, "markdown")
    assert sorted((item["source"], item["outcome"]) for item in summary["items"]) == [
        ("kafka.md", "new"),
        ("sub/raft.md", "new"),
    ]
    jobs = jobs_of(JobStore(db, fast_settings()))
    assert sorted(job.target_id for job in jobs if job.job_type is JobType.CARD_ANALYSIS) == sorted(
        summary["scrap_ids"]
    )

    again = run_san("import", str(vault))
    assert again.stdout.startswith(f"Imported 0 new scraps, 2 already in the library from {vault}.")
    listed = run_san("import", "--list")
    assert summary["batch_id"] in listed.stdout
    assert "markdown" in listed.stdout

    undone = run_san("import", "--undo", summary["batch_id"])
    assert undone.returncode == 0, undone.stderr
    assert undone.stdout.startswith(f"Import {summary['batch_id']} undone: 2 scraps moved to the Trash.\n")
    assert "san trash restore " in undone.stdout
    assert run_san("scrap", "list", "--json").stdout.strip() == "[]"
    assert run_san("import", "--list").stdout.strip() == "No import to undo."
    twice = run_san("import", "--undo", summary["batch_id"])
    assert (twice.returncode, twice.stderr.strip()) == (1, "san: That import was undone already.")


def test_bookmarks_come_in_as_links_whose_pages_are_fetched(db: Database) -> None:
    done = run_san("import", str(DATA / "chrome_bookmarks.html"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Imported ")
    assert any(
        line.startswith("left out") and line.split()[2].startswith("javascript:") for line in done.stdout.splitlines()
    ), done.stdout  # the bookmarklet, with why
    jobs = jobs_of(JobStore(db, fast_settings()))
    assert jobs
    assert {job.job_type for job in jobs} == {JobType.PAGE_FETCH}  # cards follow their pages


def test_what_cannot_be_imported_is_said(tmp_path: Path) -> None:
    odd = tmp_path / "notes.txt"
    odd.write_text("just a line", encoding="utf-8")
    refused = run_san("import", str(odd))
    assert refused.returncode == 1
    assert "Not a file SAN Desktop can import" in refused.stderr
    missing = run_san("import", str(tmp_path / "nowhere"))
    assert missing.returncode == 1
    assert "Nothing to import at" in missing.stderr
    neither = run_san("import")
    assert (neither.returncode, neither.stderr.strip()) == (
        1,
        "san: Name the folder or file to import (or --list, --undo BATCH).",
    )


def test_a_key_linked_into_a_vault_is_left_out_and_said_so(db: Database, tmp_path: Path) -> None:
    vault = _vault(tmp_path / "vault")
    key = tmp_path / "home" / ".ssh" / "id_rsa"
    key.parent.mkdir(parents=True)
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n-----END OPENSSH PRIVATE KEY-----\n")
    key.chmod(0o600)
    (vault / "id_rsa.md").symlink_to(key)

    done = run_san("import", str(vault))

    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Imported 2 new scraps, 1 left out from {vault}.")
    assert any(
        line.split()[:3] == ["left", "out", "id_rsa.md"] and line.endswith("a link out of the folder, not followed")
        for line in done.stdout.splitlines()
    ), done.stdout
    assert "PRIVATE KEY" not in run_san("scrap", "list", "--json").stdout


def test_a_folder_nested_past_the_walks_bound_is_refused_with_a_sentence_and_nothing_stored(
    db: Database, tmp_path: Path
) -> None:
    """Issue 38: a home folder or `/` named by mistake, here a chain of 70 folders, is a sentence (the bound is
    64 levels), not a frozen import."""
    vault = _vault(tmp_path / "vault")
    vault.joinpath(*["deeper"] * 70).mkdir(parents=True)
    for dry_run in (("--dry-run",), ()):
        refused = run_san("import", str(vault), *dry_run)
        assert (refused.returncode, refused.stdout) == (1, ""), refused.stderr
        assert refused.stderr.strip() == (
            f"san: {vault} has folders nested more than 64 deep (in deeper), more than a folder of notes holds, "
            "so nothing was imported. Choose the folder of the notes itself."
        )
    assert json.loads(run_san("scrap", "list", "--json").stdout) == []
    assert run_san("import", "--list").stdout == "No import to undo.\n"
