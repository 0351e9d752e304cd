"""What the Inbox says before anything is scrapped: the three ways to capture (with the shortcut the
window really has), and, offered but never needed, setting up an AI server and connecting GitHub."""

from __future__ import annotations

import html
from dataclasses import dataclass

from PySide6.QtGui import QKeySequence

from san_desktop.app import SanApp
from san_desktop.ui.common.empty_state import Action, StateStack

SCRAP_NOW = "scrap"  # the keys of the welcome's buttons
AI = "ai"  # also the Settings section each set-up button asks for
GITHUB = "github"

TITLE = "Nothing scrapped yet"
INTRO = (
    "Scrap anything you want to remember — a paragraph, a link, a file. Each scrap becomes a card with a "
    "title, a summary and tags, made on this computer: nothing to set up first."
)


@dataclass(frozen=True)
class SetUp:
    """What is set up already (read off the GUI thread: the token is in the keyring)."""

    ai_server: bool  # an OpenAI-compatible server rather than the embedded provider
    github: bool  # a GitHub token (keyring or environment)


def read_set_up(app: SanApp) -> SetUp:
    return SetUp(app.settings.ai.provider != "local", app.connections.github_token_source() != "none")


def _unbroken(text: str) -> str:
    """``text`` (escaped) broken at no space."""
    return html.escape(text, quote=False).replace(" ", "&nbsp;")


def _code(text: str) -> str:
    return f"<code>{_unbroken(text)}</code>"


def ways_to_capture(shortcut: QKeySequence) -> str:
    """The three ways, as rich text; ``shortcut`` as the platform writes it (Ctrl+Shift+V, ⇧⌘V)."""
    keys = html.escape(shortcut.toString(QKeySequence.SequenceFormat.NativeText)) or "the Scrap clipboard shortcut"
    add = _code('san scrap add --text "…"')
    rows = (
        f"<b>Copy, then press {keys}</b> while SAN Desktop is in front — or turn on "
        f"{_unbroken('File › Watch clipboard')} to scrap everything you copy.",
        "<b>Drag and drop</b> text, a link, or a .txt, .md or .html file onto this window.",
        # a command on a line of its own: a line broken at "--" would read as two commands
        f"<b>From a terminal:</b><br>{add}<br>or with {_code('--url https://…')} or {_code('--file notes.md')}",
    )
    cells = "".join(
        f"<tr><td valign='top'><b>{number}.</b></td><td>{row}</td></tr>" for number, row in enumerate(rows, start=1)
    )
    return f"<table cellspacing='0' cellpadding='3'>{cells}</table>"


def offers(set_up: SetUp | None) -> tuple[str, list[Action]]:
    """The optional set-up still to offer (none until it is known what is set up)."""
    if set_up is None:
        return "", []
    actions: list[Action] = []
    parts: list[str] = []
    if not set_up.ai_server:
        actions.append((AI, "Set up an AI server…"))
        parts.append("an AI server (OpenAI, Ollama, LM Studio) writes sharper cards")
    if not set_up.github:
        actions.append((GITHUB, "Connect GitHub…"))
        parts.append("GitHub lets you commit your daily TIL notes and get picks from your stars")
    if not parts:
        return "", []
    return f"<i>Optional:</i> {'; '.join(parts)}.", actions


def show_welcome(states: StateStack, shortcut: QKeySequence, set_up: SetUp | None) -> None:
    note, note_actions = offers(set_up)
    states.show_empty(
        TITLE,
        INTRO,
        [(SCRAP_NOW, "Scrap the clipboard")],
        steps=ways_to_capture(shortcut),
        note=note,
        note_actions=note_actions,
    )
