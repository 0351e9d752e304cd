"""``cli.common.Progress``: one line rewritten in place on a terminal, a few plain lines elsewhere, nothing under
``--json``. The stream and the clock are handed in: no terminal, no sleeping."""

from __future__ import annotations

import io

from san_desktop.cli.common import Progress, TerminalSafeStream


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_on_a_terminal_one_line_is_rewritten_in_place_and_ended_once() -> None:
    stream, clock = FakeTerminal(), Clock()
    with Progress("Importing", stream=stream, clock=clock, width=80) as progress:
        progress(0, 1000)
        clock.now = 1.0
        progress(500, 1000)
        clock.now = 2.0
        progress(1000, 1000)
    assert stream.getvalue() == (
        "\rImporting 0 of 1,000 (0%)\x1b[K\rImporting 500 of 1,000 (50%)\x1b[K\rImporting 1,000 of 1,000 (100%)\x1b[K\n"
    )


def test_on_a_terminal_updates_are_throttled_and_the_newest_shown_at_the_end() -> None:
    stream, clock = FakeTerminal(), Clock()
    progress = Progress("Copying", stream=stream, clock=clock, width=80)
    progress.say("scraps: 100 row(s)")
    for step in range(1, 10):  # nine more within a tenth of a second: held back
        clock.now = step / 100
        progress.say(f"cards: {step} row(s)")
    assert stream.getvalue() == "\rCopying: scraps: 100 row(s)\x1b[K"
    progress.close()
    assert stream.getvalue().endswith("\rCopying: cards: 9 row(s)\x1b[K\n")


def test_on_a_terminal_the_control_characters_pass_the_terminal_filter() -> None:
    terminal = FakeTerminal()
    with Progress("Backing up", stream=TerminalSafeStream(terminal), width=80) as progress:  # as `san` wraps stderr
        progress(1, 2)
    assert terminal.getvalue() == "\rBacking up 1 of 2 (50%)\x1b[K\n"


def test_a_line_too_wide_for_the_terminal_is_cut_so_it_does_not_wrap() -> None:
    stream = FakeTerminal()
    with Progress("Copying", stream=stream, width=20) as progress:
        progress.say("a table with a very long name: 12 row(s)")
    line = stream.getvalue().removeprefix("\r").removesuffix("\x1b[K\n")
    assert len(line) < 20
    assert line.endswith("…")


def test_elsewhere_plain_lines_every_tenth_of_the_way_or_few_seconds() -> None:
    stream, clock = io.StringIO(), Clock()
    with Progress("Importing", stream=stream, clock=clock) as progress:
        for done in range(0, 1001, 10):  # 101 updates within half a second
            clock.now = done / 2000
            progress(done, 1000)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "Importing 0 of 1,000 (0%)"
    assert lines[1] == "Importing 100 of 1,000 (10%)"
    assert lines[-1] == "Importing 1,000 of 1,000 (100%)"
    assert len(lines) == 11
    assert "\r" not in stream.getvalue()


def test_elsewhere_a_slow_step_without_numbers_is_said_after_a_few_seconds() -> None:
    stream, clock = io.StringIO(), Clock()
    progress = Progress("Copying", stream=stream, clock=clock)
    progress.say("scraps: 100 row(s)")
    clock.now = 1.0
    progress.say("cards: 10 row(s)")  # too soon
    clock.now = 6.0
    progress.say("quizzes: 20 row(s)")
    progress.close()
    assert stream.getvalue() == "Copying: scraps: 100 row(s)\nCopying: quizzes: 20 row(s)\n"


def test_quiet_says_nothing_even_on_a_terminal() -> None:
    stream = FakeTerminal()
    with Progress("Backing up", quiet=True, sizes=True, stream=stream) as progress:
        progress(0, 2_000_000)
        progress.say("a step")
        progress(2_000_000, 2_000_000)
    assert stream.getvalue() == ""


def test_sizes_are_said_in_megabytes() -> None:
    stream = io.StringIO()
    Progress("Backing up", sizes=True, stream=stream)(1_500_000, 3_000_000)
    assert stream.getvalue() == "Backing up 1.5 MB of 3.0 MB (50%)\n"
