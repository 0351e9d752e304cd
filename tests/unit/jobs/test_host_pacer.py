"""Pages of one site one a second (an imported bookmarks file holds hundreds of one site's pages)."""

from __future__ import annotations

import threading

from san_desktop.jobs.fetch import HostPacer


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_site_waits_its_turn_and_other_sites_do_not() -> None:
    clock = Clock()
    pacer = HostPacer(1.0, clock)
    assert pacer.reserve("https://blog.example/a") == 0.0
    assert pacer.reserve("https://BLOG.example/b?x=1") == 1.0  # the same host, however written
    assert pacer.reserve("https://blog.example/c") == 2.0  # turns are taken in order
    assert pacer.reserve("https://news.example/a") == 0.0
    clock.now += 2.5
    assert pacer.reserve("https://blog.example/d") == 0.5
    clock.now += 10
    assert pacer.reserve("https://blog.example/e") == 0.0


def test_this_machine_and_its_network_are_not_paced() -> None:
    pacer = HostPacer(1.0, Clock())
    for address in ("http://localhost:8080/a", "http://127.0.0.1:9/x", "http://192.168.1.2/y", "http://[::1]/z"):
        assert pacer.reserve(address) == 0.0
        assert pacer.reserve(address) == 0.0


def test_threads_asking_at_once_get_distinct_turns() -> None:
    pacer = HostPacer(1.0, Clock())
    waits: list[float] = []
    lock = threading.Lock()

    def take() -> None:
        wait = pacer.reserve("https://blog.example/")
        with lock:
            waits.append(wait)

    threads = [threading.Thread(target=take) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(waits) == [float(turn) for turn in range(8)]
