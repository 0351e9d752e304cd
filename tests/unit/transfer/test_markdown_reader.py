"""A folder of notes or an Obsidian vault read into items: front matter, titles, tags, dates, and what is refused."""

from __future__ import annotations

import os
import socket
import stat
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from san_desktop.core.enums import SourceType
from san_desktop.core.errors import SanError
from san_desktop.transfer.items import ImportItem, ImportKind, ImportPlan, Refusal
from san_desktop.transfer.readers import ImportCancelled, markdown, read_plan
from san_desktop.transfer.readers.markdown import FolderTooLargeError


def write(root: Path, relative: str, content: str | bytes) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root, ".obsidian/app.json", '{"legacyEditor": false}')
    write(root, ".obsidian/snippets/theme.md", "# not a note of the person")
    write(root, ".trash/old.md", "deleted long ago")
    write(root, ".hidden/secret.md", "a hidden folder's note")
    write(root, ".hidden-note.md", "a hidden note")
    write(root, "Inbox.md", "# Inbox heading\n\nSee [[Databases/wal|the WAL]] and ![[diagram.png]].\n")
    write(
        root,
        "Databases/wal.md",
        "---\ntitle: WAL notes\ntags: [db, '#sqlite', db]\ndate: 2024-03-04\n---\n\nReaders do not block writers.\r\n",
    )
    write(
        root,
        "Databases/Indexes/btree.markdown",
        "---\ntags: '#db #btree'\ncreated: 2024-03-04T10:11:12+09:00\n---\n# B-trees\n\nPages split in two.\n",
    )
    write(root, "Databases/Indexes/hash.md", "---\ntag: db, hashing\ncreated_at: '2024-03-04 10:11'\n...\nBuckets.\n")
    write(root, "diagram.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    write(root, "broken.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00")
    write(root, "copy-a.md", "The same thought, twice.\n")
    write(root, "copy-b.md", "The same thought, twice.\n")
    write(root, "empty.md", "---\ntitle: Only a title\n---\n\n")
    write(root, "bad-front.md", "---\ntitle: [unclosed\n---\nThe body survives.\n")
    write(root, "notes.txt", "plain text notes\n")
    return root


@pytest.fixture
def plan(vault: Path) -> ImportPlan:
    return read_plan(vault)


def by_ref(plan: ImportPlan) -> dict[str, ImportItem]:
    return {item.source_ref: item for item in plan.items}


def test_every_note_comes_in_once_in_a_stable_order_and_hidden_ones_not_at_all(plan: ImportPlan) -> None:
    assert plan.kind is ImportKind.MARKDOWN
    assert [item.source_ref for item in plan.items] == [
        "Inbox.md",
        "bad-front.md",
        "copy-a.md",
        "copy-b.md",
        "notes.txt",
        "Databases/wal.md",
        "Databases/Indexes/btree.markdown",
        "Databases/Indexes/hash.md",
    ]
    assert all(item.source_type is SourceType.FILE for item in plan.items)


def test_attachments_binary_and_empty_notes_are_refused_with_their_reasons(plan: ImportPlan) -> None:
    assert plan.refused == [
        Refusal("broken.md", "broken.md is a binary file, not text; nothing was scrapped."),
        Refusal("diagram.png", "an attachment, not a note"),
        Refusal("empty.md", "Nothing to scrap: the content is empty or only whitespace."),
    ]


def test_front_matter_gives_title_tags_and_date_and_leaves_the_content(plan: ImportPlan) -> None:
    wal = by_ref(plan)["Databases/wal.md"]
    assert wal.title == "WAL notes"
    assert wal.tags == ("db", "sqlite")
    assert wal.content == "Readers do not block writers."
    assert wal.captured_at == datetime(2024, 3, 4).astimezone()
    assert wal.captured_at is not None
    assert wal.captured_at.tzinfo is not None


def test_string_tags_with_hashes_and_an_aware_creation_time(plan: ImportPlan) -> None:
    btree = by_ref(plan)["Databases/Indexes/btree.markdown"]
    assert btree.tags == ("db", "btree")
    assert btree.title == "B-trees"  # no title field: the first heading
    assert btree.content == "# B-trees\n\nPages split in two."
    assert btree.captured_at == datetime(2024, 3, 4, 10, 11, 12, tzinfo=timezone(timedelta(hours=9)))


def test_obsidian_tag_key_comma_tags_and_a_naive_date_string_read_as_local_time(plan: ImportPlan) -> None:
    hashed = by_ref(plan)["Databases/Indexes/hash.md"]
    assert hashed.tags == ("db", "hashing")
    assert hashed.content == "Buckets."
    assert hashed.title == "hash"
    assert hashed.captured_at == datetime(2024, 3, 4, 10, 11).astimezone()


def test_wikilinks_and_embeds_stay_as_written_and_the_heading_is_the_title(plan: ImportPlan) -> None:
    inbox = by_ref(plan)["Inbox.md"]
    assert inbox.content == "# Inbox heading\n\nSee [[Databases/wal|the WAL]] and ![[diagram.png]]."
    assert inbox.title == "Inbox heading"
    assert inbox.tags == ()
    assert inbox.captured_at is None


def test_duplicate_notes_both_come_in_for_the_importer_to_count(plan: ImportPlan) -> None:
    items = by_ref(plan)
    assert items["copy-a.md"].content == items["copy-b.md"].content == "The same thought, twice."
    assert (items["copy-a.md"].title, items["copy-b.md"].title) == ("copy-a", "copy-b")


def test_broken_front_matter_is_not_taken_as_text_and_the_note_says_so(plan: ImportPlan) -> None:
    """Issue 40: the YAML became the card's summary, and reached its TIL, its Anki card and its quizzes."""
    note = by_ref(plan)["bad-front.md"]
    assert note.content == "The body survives."
    assert note.title == "bad-front"
    (warning,) = note.warnings
    assert warning.startswith("its front matter did not parse at line 2 (")
    assert warning.endswith("): its fields were not read")


def test_a_text_note_without_heading_is_titled_by_its_file_name(plan: ImportPlan) -> None:
    assert by_ref(plan)["notes.txt"].title == "notes"


def test_a_note_over_the_size_limit_is_refused_as_too_large(tmp_path: Path) -> None:
    write(tmp_path, "big.md", "x" * 2000)
    write(tmp_path, "small.md", "x" * 10)
    plan = read_plan(tmp_path, max_bytes=1000)
    assert [item.source_ref for item in plan.items] == ["small.md"]
    assert [refusal.source_ref for refusal in plan.refused] == ["big.md"]
    assert "too large" in plan.refused[0].reason


def test_a_linked_folder_is_not_followed(tmp_path: Path) -> None:
    write(tmp_path, "notes/a.md", "a")
    (tmp_path / "notes" / "loop").symlink_to(tmp_path / "notes")
    plan = read_plan(tmp_path / "notes")
    assert [item.source_ref for item in plan.items] == ["a.md"]
    assert plan.refused == [Refusal("loop", "a link to a folder, not followed")]


def test_an_aware_front_matter_time_keeps_its_instant(tmp_path: Path) -> None:
    write(tmp_path, "n.md", "---\ndate: 2024-03-04T22:11:12Z\n---\nbody")
    (item,) = read_plan(tmp_path).items
    assert item.captured_at == datetime(2024, 3, 4, 22, 11, 12, tzinfo=UTC)


def test_a_comment_in_a_code_block_is_not_taken_for_the_title(tmp_path: Path) -> None:
    write(tmp_path, "setup.md", "```sh\n# install first\npip install san\n```\n\n# Setting up\n")
    (item,) = read_plan(tmp_path).items
    assert item.title == "Setting up"


def test_a_subfolder_that_cannot_be_listed_is_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "locked/inside.md", "hidden from us")
    write(tmp_path, "open.md", "readable")
    list_folder = os.scandir

    def scandir(folder: Path) -> Iterator[os.DirEntry[str]]:
        # chmod cannot stop root (as CI may run) from listing a folder: the refusal of the system is simulated
        if Path(folder).name == "locked":
            raise PermissionError(13, "Permission denied", str(folder))
        return list_folder(folder)

    monkeypatch.setattr(os, "scandir", scandir)
    plan = read_plan(tmp_path)
    assert [item.source_ref for item in plan.items] == ["open.md"]
    assert plan.refused == [Refusal("locked", "a folder that could not be read")]


def test_a_folder_that_cannot_be_listed_at_all_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def scandir(folder: Path) -> Iterator[os.DirEntry[str]]:
        raise PermissionError(13, "Permission denied", str(folder))

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(SanError, match=r"Could not read the folder .*Permission denied"):
        read_plan(tmp_path)


KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"


def test_a_link_out_of_the_folder_is_left_out_unread_and_one_inside_is_read(tmp_path: Path) -> None:
    outside = tmp_path / "home"
    write(outside, ".ssh/id_rsa", KEY)
    (outside / ".ssh" / "id_rsa").chmod(0o600)
    write(outside, "diary.md", "# Private diary\n\nNot part of the vault.\n")
    vault = tmp_path / "vault"
    write(vault, "real.md", "# A real note\n\nInside the vault.\n")
    (vault / "id_rsa.md").symlink_to(outside / ".ssh" / "id_rsa")
    (vault / "sub").mkdir()
    (vault / "sub" / "diary.md").symlink_to(Path("..", "..", "home", "diary.md"))  # relative, still outside
    (vault / "ssh").symlink_to(outside / ".ssh", target_is_directory=True)
    (vault / "alias.md").symlink_to(vault / "real.md")  # a link to a note of the vault: read
    (vault / "dangling.md").symlink_to(vault / "gone.md")

    plan = read_plan(vault)

    assert [(item.source_ref, item.title) for item in plan.items] == [
        ("alias.md", "A real note"),
        ("real.md", "A real note"),
    ]
    assert sorted(plan.refused, key=lambda refusal: refusal.source_ref) == [
        Refusal("dangling.md", "a link to nothing (its target is missing), not followed"),
        Refusal("id_rsa.md", "a link out of the folder, not followed"),
        Refusal("ssh", "a link out of the folder, not followed"),
        Refusal("sub/diary.md", "a link out of the folder, not followed"),
    ]
    assert not any("PRIVATE KEY" in item.content or "diary" in item.content.lower() for item in plan.items)


def test_a_vault_named_through_a_link_is_read_and_its_own_links_judged_inside_it(tmp_path: Path) -> None:
    vault = tmp_path / "Dropbox" / "vault"
    write(vault, "real.md", "# Real\n\ntext\n")
    (vault / "alias.md").symlink_to(Path("real.md"))
    (tmp_path / "vault-link").symlink_to(vault, target_is_directory=True)

    plan = read_plan(tmp_path / "vault-link")

    assert [item.source_ref for item in plan.items] == ["alias.md", "real.md"]
    assert plan.refused == []
    assert plan.source == str(tmp_path / "vault-link")


def test_pipes_sockets_and_devices_are_left_out_unopened_with_their_reasons(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "note.md", "a note")
    os.mkfifo(vault / "pipe.md")  # opened for reading, a pipe without a writer would hang the import
    os.mkfifo(vault / "pipe")
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(vault / "sock.md"))
        expected = [
            Refusal("pipe", "a pipe (FIFO), not a note: not read"),
            Refusal("pipe.md", "a pipe (FIFO), not a note: not read"),
            Refusal("sock.md", "a socket, not a note: not read"),
        ]
        if os.geteuid() == 0:  # only root makes device nodes: /dev/null's own numbers
            os.mknod(vault / "null.md", stat.S_IFCHR | 0o600, os.makedev(1, 3))
            expected.insert(0, Refusal("null.md", "a device, not a note: not read"))

        plan = read_plan(vault)

    assert [item.source_ref for item in plan.items] == ["note.md"]
    assert plan.refused == expected


# --- the walk's bounds (issue 38): a folder named by mistake is a sentence, not a frozen dialog ------------


def _chain(root: Path, depth: int) -> Path:
    """``depth`` folders one inside the other under ``root``, a note at the bottom; the deepest folder."""
    deepest = root.joinpath(*["d"] * depth)
    deepest.mkdir(parents=True)
    (deepest / "bottom.md").write_text("The deepest note.", encoding="utf-8")
    return deepest


def test_a_folder_nested_deeper_than_the_bound_imports_nothing_and_says_so(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write(vault, "top.md", "A note at the top.")
    _chain(vault, 70)
    with pytest.raises(FolderTooLargeError) as refused:
        read_plan(vault)
    assert str(refused.value) == (
        f"{vault} has folders nested more than 64 deep (in d), more than a folder of notes holds, so nothing "
        "was imported. Choose the folder of the notes itself."
    )


def test_a_folder_exactly_as_deep_as_the_bound_is_read_to_its_bottom(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    _chain(vault, markdown.MAX_DEPTH)
    (item,) = read_plan(vault).items
    assert item.source_ref == "/".join(["d"] * 64 + ["bottom.md"])


def test_a_folder_with_more_files_and_folders_than_the_bound_imports_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(markdown, "MAX_ENTRIES", 50)  # (100,000 in use: the same walk, made small)
    vault = tmp_path / "vault"
    for n in range(30):
        write(vault, f"a/note {n:02}.md", f"Note {n}.")
    for n in range(20):
        write(vault, f"b/picture {n:02}.png", b"\x89PNG\r\n\x1a\n")
    with pytest.raises(FolderTooLargeError) as refused:  # 52: two folders and their 50 files
        read_plan(vault)
    assert str(refused.value) == (
        f"{vault} holds more than 50 files and folders: more than a folder of notes holds, so nothing was "
        "imported. Choose the folder of the notes itself (the vault, not the folder it is in), or import it a "
        "part at a time."
    )
    (vault / "b" / "picture 19.png").unlink()
    (vault / "b" / "picture 18.png").unlink()
    plan = read_plan(vault)  # 50: within the bound
    assert (len(plan.items), len(plan.refused)) == (30, 18)


def test_what_obsidian_and_git_keep_for_themselves_is_not_walked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(markdown, "MAX_ENTRIES", 10)
    vault = tmp_path / "vault"
    write(vault, "note.md", "The one note.")
    for hidden in (".git/objects", ".obsidian/plugins", ".trash"):
        for n in range(20):
            write(vault, f"{hidden}/{n}.md", "not a note of the person")
    plan = read_plan(vault)  # four names listed at the top, none of the sixty inside
    assert [item.source_ref for item in plan.items] == ["note.md"]
    assert plan.refused == []


def test_notes_adding_up_to_more_than_the_bound_import_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(markdown, "MAX_NOTES_BYTES", 100)  # (500 MB in use)
    vault = tmp_path / "vault"
    write(vault, "one.md", "x" * 60)
    write(vault, "two.md", "y" * 60)
    with pytest.raises(FolderTooLargeError, match=r"^The notes in .*vault add up to more than 0\.0 MB"):
        read_plan(vault)
    (vault / "two.md").unlink()
    assert len(read_plan(vault).items) == 1


def test_a_walk_past_its_time_imports_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(markdown, "MAX_SECONDS", 0.0)  # (ten minutes in use: a slow network drive)
    write(tmp_path, "note.md", "A note.")
    with pytest.raises(FolderTooLargeError) as refused:
        read_plan(tmp_path)
    assert str(refused.value) == (
        f"Reading {tmp_path} took longer than 0 minutes, so nothing was imported. Choose a smaller folder, or "
        "copy it to this computer's own disk first."
    )


def test_a_walk_through_folders_without_notes_is_cancelled_at_once(tmp_path: Path) -> None:
    for n in range(40):
        (tmp_path / f"empty {n:02}").mkdir()
    asked = 0

    def cancelled() -> bool:
        nonlocal asked
        asked += 1
        return asked > 45  # once the top folder's forty names are listed: in the walk through empty folders

    with pytest.raises(ImportCancelled):
        read_plan(tmp_path, cancelled=cancelled)
    assert asked == 46  # the first look after it was cancelled stopped the walk


def test_a_note_of_gigabytes_is_refused_by_its_size_without_being_read(tmp_path: Path) -> None:
    with (tmp_path / "huge.md").open("wb") as huge:
        huge.truncate(2 << 30)  # (sparse: no disk used; reading it whole would take 2 GB of memory)
    write(tmp_path, "small.md", "A small note.")
    plan = read_plan(tmp_path)
    assert [item.source_ref for item in plan.items] == ["small.md"]
    assert plan.refused == [
        Refusal(
            "huge.md",
            "huge.md is too large to scrap: 2147.5 MB, larger than 1.0 MB (capture.max_bytes); nothing was scrapped.",
        )
    ]


def test_inline_tags_nested_ones_too_join_the_front_matters_but_not_those_in_code_or_addresses(tmp_path: Path) -> None:
    """Issue 40: a vault's inline #tags were dropped."""
    write(
        tmp_path,
        "raft.md",
        "---\ntags: [consensus]\n---\n# Raft #not-a-heading-tag\n\nLeaders and terms. #distributed/consensus #Raft\n"
        "See https://example.com/page#section and issue #123.\n\n```\n#include <stdio.h>\n```\n"
        "Inline `#code` stays out. #consensus again.\n",
    )
    (item,) = read_plan(tmp_path).items
    assert item.tags == ("consensus", "not-a-heading-tag", "distributed/consensus", "Raft")


def test_the_front_matters_source_is_the_scraps_and_the_note_is_known_by_its_place_in_the_vault(
    tmp_path: Path,
) -> None:
    write(tmp_path, "a.md", "---\nurl: https://example.com/raft\naliases: [Raft paper]\n---\nNo heading here.")
    write(tmp_path, "b.md", "---\nsource: Designing Data-Intensive Applications\n---\n# B\n\n[[a|see a]] stays.")
    items = {item.entry: item for item in read_plan(tmp_path).items}
    assert (items["a.md"].source_ref, items["a.md"].title) == ("https://example.com/raft", "Raft paper")
    assert items["b.md"].source_ref == "Designing Data-Intensive Applications"
    assert items["b.md"].content.endswith("[[a|see a]] stays.")  # a wikilink is kept as it is
    assert items["a.md"].identity == f"{tmp_path.resolve()}/a.md"
    assert items["b.md"].identity == f"{tmp_path.resolve()}/b.md"


def test_a_day_of_sans_own_export_is_left_out_and_its_card_notes_bring_their_cards(tmp_path: Path) -> None:
    write(tmp_path, "TIL/2026-12-07.md", "---\ntitle: TIL\ndate: '2026-12-07'\nsan_id: s1\nsan_kind: til\n---\n# TIL")
    write(tmp_path, "TIL/2024-01-02.md", "---\ntitle: Old\ndate: '2024-01-02'\ntags: [til]\nsan_id: s2\n---\n# Old")
    write(
        tmp_path,
        "Cards/Raft.md",
        "---\ntitle: Raft\ntags: [consensus protocols]\ncategory: Databases\nsource: null\nsan_id: c1\n---\n\n"
        "# Raft\n\n<!-- san:summary -->\n\nA leader replicates.\n\n<!-- /san:summary -->\n\n"
        "<!-- san:text -->\n\nRaft elects a leader. #inline\n\n<!-- /san:text -->\n\n## Related\n\n- [[Paxos]]\n",
    )
    plan = read_plan(tmp_path)
    assert sorted(refusal.source_ref for refusal in plan.refused) == ["TIL/2024-01-02.md", "TIL/2026-12-07.md"]
    assert all("TIL of a SAN Desktop export" in refusal.reason for refusal in plan.refused)
    (card,) = plan.items
    assert card.content == "Raft elects a leader. #inline"  # the text alone: not the summary, not the links
    assert card.card is not None
    assert (card.card.title, card.card.summary) == ("Raft", "A leader replicates.")
    assert card.card.category == "Databases"
    assert (card.tags, card.source_ref, card.identity) == (("consensus protocols",), "", "san:c1")
