"""The embedded provider cannot hang on a long token without spaces (issue 23): its patterns take linear
time, and the provider as a whole gives a card for a 1 MB token at once.

Linearity cannot be timed in a test; instead each input runs in a child process with a wall-clock limit
hundreds of times what linear work needs. Before the fix the same inputs took hours (a 20k-character token
took 110 s in ``prose`` alone, growing with the square of its length or worse).
"""

from __future__ import annotations

import subprocess
import textwrap

import pytest

from tests.support.processes import run_python

CHILD_LIMIT = 60.0  # seconds: linear work on these inputs takes well under one


def _finishes(script: str) -> str:
    """Run ``script`` in a child; its stdout, or the test fails when it outlives ``CHILD_LIMIT``."""
    try:
        done = run_python(["-c", textwrap.dedent(script)], timeout=CHILD_LIMIT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running after {CHILD_LIMIT:.0f} s: the work is not linear in its input")
    assert done.returncode == 0, done.stderr
    return done.stdout


# Strings that made a pattern backtrack: runs of one unit without spaces, with what follows them.
ADVERSARIAL = {
    "file name": "'a.' * 50_000",  # [\w-]+(?:\.[\w-]+)*\. tried at every dot
    "file name, no dots": "'a' * 100_000",
    "e-mail": "'@' * 100_000",  # \S+@\S+\.\w+: cubic in the number of @
    "e-mail pieces": "'a@' * 50_000",
    "heading tail": "'# a' + ' ' * 100_000 + 'b'",  # (.+?)\s*#*\s*$: cubic in the spaces
    "tabs in a heading": "'# a' + '\\t' * 100_000 + 'b'",
    "blank lines": "'a' + '\\n' * 100_000 + 'a'",  # ^\s*(?:[-*+]|\d+[.)]) and the table rule across lines
    "blank lines with spaces": "'a' + ' \\n' * 50_000 + 'a'",
    "dashes": "'-' * 100_000",
    "pipes and a letter": "'|' * 100_000 + 'x'",
    "fences never closed": "'```x\\n' * 50_000",  # ^```[^\n]*\n.*?^```: every opening looked to the end
}


@pytest.mark.parametrize("shape", ADVERSARIAL)
def test_each_pattern_is_linear_on_a_long_token(shape: str) -> None:
    """The functions holding the patterns, on the raw input (no window cuts it here)."""
    out = _finishes(
        f"""
        from san_desktop.ai.base import code_blocks
        from san_desktop.ai.categories import features
        from san_desktop.ai.keyterms import heading, key_terms, prose
        from san_desktop.ai.summary import summarize
        from san_desktop.ai.titles import link_words

        text = {ADVERSARIAL[shape]}
        prose(text), heading(text), summarize(text), features(text), link_words(text), key_terms(text)
        code_blocks(text)
        print("done")
        """
    )
    assert out.strip() == "done"


def test_a_one_megabyte_token_gets_a_card_at_once() -> None:
    """The whole provider on tokens as long as a scrap may be (the capture limit is 1 MB)."""
    out = _finishes(
        f"""
        from san_desktop.ai.base import DEFAULT_CATEGORIES, TilCard
        from san_desktop.ai.local import LocalProvider
        from san_desktop.core.enums import QuizType

        provider = LocalProvider()
        shapes = [{", ".join(f"({value}) * 10" for value in ADVERSARIAL.values())}, "x" * 1_000_000]
        for text in shapes:
            text = text[:1_000_000]
            card = provider.analyze_card(text, DEFAULT_CATEGORIES)
            provider.refine_scrap(text)
            provider.embed([text])
            til = TilCard("c1", card.title, card.summary, card.tags, card.category, None)
            provider.make_quizzes([til], list(QuizType))
            provider.write_til("2026-11-29", [til])
        print(card.title)
        """
    )
    assert out.strip()  # a title, even for a token of one letter
