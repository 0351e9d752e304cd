"""The embedded provider reads a bounded window of a long text, and a time limit per call stops
whatever still runs too long, with a sentence a person can act on (issue 23)."""

from __future__ import annotations

import pytest

from san_desktop.ai.base import DEFAULT_CATEGORIES
from san_desktop.ai.local import ANALYSIS_WINDOW, LocalProvider, analysis_window
from san_desktop.ai.time_limit import AnalysisTooLongError
from tests.support.real_text import paragraphs

ARTICLE = "\n\n".join(paragraphs(80))  # about 26,000 characters of real technical prose


def test_a_typical_article_is_read_whole() -> None:
    assert 20_000 < len(ARTICLE) < ANALYSIS_WINDOW
    assert analysis_window(ARTICLE) == ARTICLE


def test_a_long_text_is_cut_between_words() -> None:
    text = "word " * ANALYSIS_WINDOW
    window = analysis_window(text)
    assert ANALYSIS_WINDOW - 100 < len(window) <= ANALYSIS_WINDOW
    assert window.endswith("word")
    token = "x" * (2 * ANALYSIS_WINDOW)
    assert analysis_window(token) == token[:ANALYSIS_WINDOW]


class StepClock:
    """A monotonic clock that moves one second each time it is read."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def test_analysis_past_its_time_limit_stops_with_a_sentence() -> None:
    clock = StepClock()
    provider = LocalProvider(time_limit_seconds=30.0, clock=clock)
    with pytest.raises(AnalysisTooLongError) as raised:
        provider.analyze_card(ARTICLE, DEFAULT_CATEGORIES)
    assert str(raised.value) == (
        "The text took too long to analyse offline (over 30 s): shorten it, raise ai.local_time_limit_seconds "
        "in the settings, or use an AI server."
    )
    # started at 1 s, so the limit ends at 31 s: checked all along the work, it stopped at the first check past it
    assert clock.now == 32.0


def test_within_its_time_limit_analysis_is_unchanged() -> None:
    timed = LocalProvider(time_limit_seconds=3600.0, clock=StepClock())
    assert timed.analyze_card(ARTICLE, DEFAULT_CATEGORIES) == LocalProvider().analyze_card(ARTICLE, DEFAULT_CATEGORIES)
