"""Background threads yield the CPU to the window: lowered once, for good, and only the thread that asks."""

from __future__ import annotations

import threading

from san_desktop.core.thread_priority import BACKGROUND_NICE, lower_current_thread
from tests.support.thread_priority import linux_only, thread_nice

pytestmark = linux_only


def test_a_thread_lowers_itself_and_no_other() -> None:
    before = thread_nice()
    seen: list[tuple[bool, int, bool]] = []

    def background() -> None:
        seen.append((lower_current_thread(), thread_nice(), lower_current_thread()))

    worker = threading.Thread(target=background)
    worker.start()
    worker.join()
    assert seen == [(True, max(before, BACKGROUND_NICE), True)]
    assert thread_nice() == before  # the calling thread (the GUI's, in the app) keeps its priority
