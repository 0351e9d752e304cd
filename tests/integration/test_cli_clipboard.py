"""`san scrap add --clipboard` on a real X server (Xvfb), the clipboard filled by xclip as another program
would: text, HTML (kept as its text), a link (its page fetched by a job); and where there is no display."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

from san_desktop.core.enums import JobType, SourceType
from san_desktop.db.database import Database
from san_desktop.queue.store import JobStore
from tests.support.jobs import fast_settings, jobs_of
from tests.support.processes import child_env, run_san


def _scrap_from_clipboard(content: str, target: str = "UTF8_STRING") -> subprocess.CompletedProcess[str]:
    """Copy ``content`` with xclip on a fresh X server, then scrap the clipboard, as a bound key would."""
    env = child_env()
    env.pop("QT_QPA_PLATFORM", None)  # the X server's clipboard, not the offscreen one of the tests
    san = shlex.join([sys.executable, "-m", "san_desktop.cli.main", "scrap", "add", "--clipboard", "--json"])
    script = f"printf %s {shlex.quote(content)} | xclip -selection clipboard -t {target} -i && {san}"
    return subprocess.run(
        ["xvfb-run", "-a", "sh", "-c", script], capture_output=True, text=True, env=env, timeout=120, check=False
    )


def _scrap_clipboard_in(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "san_desktop.cli.main", "scrap", "add", "--clipboard"]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=60, check=False)


def test_text_html_and_a_link_copied_by_another_program_are_scrapped(db: Database) -> None:
    text = _scrap_from_clipboard("Raft elects a leader with randomised election timeouts.")
    assert text.returncode == 0, text.stderr
    result = json.loads(text.stdout)
    assert result["created"]
    listed = json.loads(run_san("scrap", "list", "--json").stdout)
    assert [(s["content"], s["source_type"]) for s in listed] == [
        ("Raft elects a leader with randomised election timeouts.", SourceType.TEXT.value)
    ]

    html = _scrap_from_clipboard("<p>SQLite <b>WAL</b> lets readers go on while one writer commits.</p>", "text/html")
    assert html.returncode == 0, html.stderr
    scrap = next(
        s
        for s in json.loads(run_san("scrap", "list", "--json").stdout)
        if s["id"] == json.loads(html.stdout)["scrap_id"]
    )
    assert (scrap["source_type"], scrap["content"]) == (
        SourceType.HTML.value,
        "SQLite WAL lets readers go on while one writer commits.",
    )

    link = _scrap_from_clipboard("https://example.com/post?utm_source=feed")
    assert link.returncode == 0, link.stderr
    scrap_id = json.loads(link.stdout)["scrap_id"]
    assert {job.job_type for job in jobs_of(JobStore(db, fast_settings())) if job.target_id == scrap_id} == {
        JobType.PAGE_FETCH
    }


def test_without_a_display_it_says_so_and_stores_nothing(db: Database) -> None:
    env = child_env()
    for variable in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"):
        env.pop(variable, None)
    result = _scrap_clipboard_in(env)
    assert result.returncode == 1
    assert "No display to read the clipboard from" in result.stderr
    assert run_san("scrap", "list", "--json").stdout.strip() == "[]"


def test_an_empty_clipboard_is_said_and_stores_nothing(db: Database) -> None:
    result = _scrap_clipboard_in(child_env(QT_QPA_PLATFORM="offscreen"))  # a clipboard nothing was copied to
    assert result.returncode == 1
    assert "The clipboard is empty or holds no text" in result.stderr
    assert run_san("scrap", "list", "--json").stdout.strip() == "[]"
