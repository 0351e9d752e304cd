"""Importing 10,000 Markdown notes from the open window (File → Import…): the preview's reading, the import's
storing rate against one-at-a-time capture, the window's worst event-loop lag meanwhile, and the rate of the
cards that follow in the background."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from bench.bench_cards import SAMPLE, WORDS
from bench.common import LagMeter, Row, median, open_window, temporary_data_dir, wait_until
from san_desktop.app import open_app
from san_desktop.core.settings import JobSettings
from san_desktop.queue.store import JobStore
from san_desktop.services.scraps import ScrapService

NOTES = 10_000
CARDS_WINDOW_SECONDS = 30  # cards counted for this long after the import


def write_vault(folder: Path, count: int = NOTES) -> None:
    """A vault of ``count`` notes in 20 folders, a third with front matter, ~600 characters each."""
    rng = np.random.default_rng(28)
    for n in range(count):
        words = [WORDS[i] for i in rng.choice(len(WORDS), size=80)]
        sentences = [" ".join(words[i : i + 10]).capitalize() + "." for i in range(0, 80, 10)]
        body = f"# Note {n}: {words[0]} and {words[1]}\n\n" + "\n".join(sentences) + f"\n\nSee [[Note {n + 1}]].\n"
        if n % 3 == 0:
            body = f"---\ntags: [{words[2]}, {words[3]}]\ncreated: 2024-0{1 + n % 9}-1{n % 10}\n---\n" + body
        target = folder / f"area {n % 20}" / f"note {n}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")


def capture_rate(directory: Path, samples: int = 500) -> float:
    """Scraps a second stored one at a time, as the clipboard and `san scrap add` store them."""
    with open_app(directory, kind="headless", log_to_stderr=False) as app:
        scraps = ScrapService(app.db, JobStore(app.db, JobSettings()))
        latencies = []
        for n in range(samples):
            began = time.perf_counter()
            scraps.capture(f"capture {n}: {SAMPLE}")
            latencies.append(time.perf_counter() - began)
    return 1 / median(latencies)


def bench_import_window(directory: Path, vault: Path) -> list[Row]:
    with open_window(directory) as (app, window):
        lag = LagMeter()
        lag.start()
        dialog = window.imports.open_dialog()
        began = time.perf_counter()
        dialog.choose(vault)
        wait_until(dialog.import_button.isEnabled, 300_000)
        read = time.perf_counter() - began
        summaries: list[object] = []
        dialog.imported.connect(summaries.append)
        began = time.perf_counter()
        dialog.start_import()
        wait_until(lambda: bool(summaries), 600_000)
        stored = time.perf_counter() - began
        lag.stop()
        imported = summaries[0].imported if summaries else 0  # type: ignore[attr-defined]
        cards_before = len(app.cards.list_cards(limit=1_000_000))
        wait_until(lambda: False, CARDS_WINDOW_SECONDS * 1000)
        cards = len(app.cards.list_cards(limit=1_000_000)) - cards_before
        dialog.close()
    return [
        Row(f"import preview of {NOTES:,} Markdown notes (read and counted)", read, "s", "off the GUI thread"),
        Row(
            f"import of {NOTES:,} Markdown notes, stored",
            imported / stored if stored else float("nan"),
            "scraps/s",
            f"{imported:,} stored in {stored:.1f} s (target <= 60 s); runner making cards meanwhile",
            anchor=capture_rate(directory.parent / "capture"),
            anchor_name="one-at-a-time capture",
        ),
        lag.row("GUI event-loop lag during that import, worst", "preview, import and its cards beginning"),
        Row(
            "cards made after the import",
            cards / CARDS_WINDOW_SECONDS,
            "cards/s",
            f"{cards:,} in the {CARDS_WINDOW_SECONDS} s after it (embedded provider, window open)",
        ),
    ]


def run_all() -> list[Row]:
    with temporary_data_dir() as directory:
        vault = directory / "vault"
        write_vault(vault)
        return bench_import_window(directory / "library", vault)


if __name__ == "__main__":
    from bench.common import print_table

    print_table(run_all())
