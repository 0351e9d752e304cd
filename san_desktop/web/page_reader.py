"""Reading a page (its article and title, ``web.extract``) out of the app's process, whether the browser sent
it or a link's page was downloaded (``jobs.fetch``, in the window or ``san jobs run``): issue 38's 8 MB page
took two minutes and 433 MB in the window, and every capture behind it waited.

Before anything is parsed, a page the browser sent whose whole text is more than a scrap may hold is refused,
by a linear scan of its markup (a downloaded page is bounded by ``capture.fetch_max_bytes`` already). What is
left is read in a child process, bounded in time (``PAGE_READ_SECONDS``: the child is killed at the bound) and
in memory (``PAGE_READ_MEMORY`` of address space where the system bounds it: Linux and the BSDs; elsewhere the
time bound alone holds); a child that failed either is not used again. At most ``children`` pages are read at
once; the next waits for a child as long as one read may take, then is refused as busy (a selection or a link
sent by the browser needs no reading and never waits here). A child with nothing to read for ``IDLE_SECONDS``
leaves, giving its memory back. Children are started with ``spawn``, as ``ai.own_process``'s are (forking a
process that runs Qt's threads is unsafe)."""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import re
import threading
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from san_desktop.core.errors import KnownError
from san_desktop.core.text import format_size
from san_desktop.web.errors import PageReaderBusyError, PageTooLargeToReadError, PageUnreadableError

log = logging.getLogger(__name__)

PAGE_READ_SECONDS = 30.0
PAGE_READ_MEMORY = 1 << 30  # a 3.5 MB page of small elements took about 460 MB to read
IDLE_SECONDS = 120.0
START_SECONDS = 60.0  # a child that has not loaded the extractor by then is not coming
STOP_SECONDS = 2.0
LOOK_SECONDS = 0.1  # how often a reader waiting for a child asks its caller whether to go on

_HIDDEN = re.compile(r"<(script|style|noscript|template|svg)\b", re.I)
_CLOSING = {name: re.compile(rf"</{name}\s*>", re.I) for name in ("script", "style", "noscript", "template", "svg")}
_TAG = re.compile(r"<[^<>]*>")  # (no backtracking: "<<<<" is scanned once)
_SPACE = re.compile(r"\s+")


def visible_text_size(markup: str) -> int:
    """About how many bytes of text a page shows (scripts, styles, tags and runs of blanks left out): at least
    what its article holds, in time linear in its length."""
    kept: list[str] = []
    position = 0
    while (opening := _HIDDEN.search(markup, position)) is not None:
        kept.append(markup[position : opening.start()])
        closing = _CLOSING[opening.group(1).lower()].search(markup, opening.end())
        if closing is None:  # never closed: the rest is the element's
            position = len(markup)
            break
        position = closing.end()
    kept.append(markup[position:])
    text = _SPACE.sub(" ", _TAG.sub(" ", "".join(kept)))
    return len(text.strip().encode("utf-8", "replace"))


def serve(connection: Connection, memory_bytes: int | None) -> None:
    """The child's loop: bound its memory, load the extractor, say so, then read pages until told to stop or
    until the parent is gone. (Its CPU priority is not lowered as the endpoint's threads' is: it takes no
    turn at the window's GIL, and at the lowest priority other busy programs would starve it past its time
    bound, refusing pages that read in a second.)"""
    _bound_memory(memory_bytes)
    from san_desktop.web.extract import readable_page, warm_up
    from san_desktop.web.fetch import Download

    warm_up()
    try:
        connection.send("ready")
        while (message := connection.recv()) is not None:
            answer: tuple[str, Any]
            try:
                answer = ("read", readable_page(Download(*message)))
            except MemoryError:
                answer = ("memory", None)
            except KnownError as exc:  # no readable text: said as it is
                answer = ("refused", str(exc))
            except Exception as exc:  # a bug: its trace goes to the parent's log
                answer = ("failed", "".join(traceback.format_exception(exc)))
            connection.send(answer)
            if answer[0] == "memory":
                return  # (what is left of a child that ran out is not trusted with the next page)
    except (EOFError, OSError):
        return  # the parent is gone


def _bound_memory(limit: int | None) -> None:
    if limit is None:
        return
    try:
        import resource

        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        bound = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (bound, hard))
    except (ImportError, ValueError, OSError):  # Windows has no resource module; macOS refuses the limit
        pass


class _Child:
    def __init__(self, memory_bytes: int | None, closings: int) -> None:
        self.closings = closings  # the reader's count when this child was started
        self._killing = threading.Lock()
        context = multiprocessing.get_context("spawn")
        self._connection, theirs = context.Pipe()
        self.process = context.Process(
            target=serve, args=(theirs, memory_bytes), name="san-desktop-page-reader", daemon=True
        )
        self.process.start()
        theirs.close()  # ours is the only end left here: the child's death reads as EOF
        try:
            if not self._connection.poll(START_SECONDS):
                raise TimeoutError(f"the page reader's process did not start within {START_SECONDS:.0f} s")
            self._connection.recv()
        except (EOFError, OSError) as exc:  # (an EOFError says nothing by itself)
            self.kill()
            raise RuntimeError(
                f"The page reader's process ended as it started (exit code {self.process.exitcode})"
            ) from exc
        except BaseException:
            self.kill()
            raise

    def read(
        self, page: tuple[str, str, str | None, bytes], seconds: float, between: Callable[[], None]
    ) -> tuple[str, Any]:
        """The child's answer; ``TimeoutError`` past ``seconds``, ``EOFError``/``OSError`` when it died;
        whatever ``between`` raises (it is called while the child reads)."""
        self._connection.send(page)
        deadline = time.monotonic() + seconds
        while not self._connection.poll(min(LOOK_SECONDS, max(0.0, deadline - time.monotonic()))):
            if time.monotonic() >= deadline:
                raise TimeoutError
            between()
        answer: tuple[str, Any] = self._connection.recv()
        return answer

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self._connection.send(None)
        self.process.join(STOP_SECONDS)
        self.kill()

    def kill(self) -> None:
        # (the reader's close() and the thread whose read it ended both kill the child: closing the pipe twice
        # at once closes one descriptor twice, the second time perhaps one that another file was given since)
        with self._killing:
            if self.process.is_alive():
                self.process.kill()
                self.process.join(STOP_SECONDS)
            if not self._connection.closed:
                self._connection.close()


class PageReader:
    """Reads pages in children bounded in time and memory (see the module's docstring)."""

    def __init__(
        self,
        *,
        seconds: float = PAGE_READ_SECONDS,
        memory_bytes: int | None = PAGE_READ_MEMORY,
        children: int = 2,
        idle_seconds: float = IDLE_SECONDS,
    ) -> None:
        self.seconds = seconds
        self.memory_bytes = memory_bytes
        self._most = children
        self._idle_seconds = idle_seconds
        self._lock = threading.Condition()
        self._idle: list[tuple[_Child, float]] = []  # with the monotonic time each went idle
        self._every: set[_Child] = set()
        self._taken = 0  # children reading, or being started to read
        self._closings = 0  # how many times close() was called: a child from before is not kept
        self._reaper: threading.Timer | None = None

    def process_ids(self) -> list[int]:
        with self._lock:
            return [child.process.pid for child in self._every if child.process.pid is not None]

    def read(self, url: str, markup: str, max_text: int) -> tuple[str, str]:
        """(title, text) of a page the browser sent; ``PageTooLargeToReadError`` for one with too much text, or
        too slow or too large to read, ``PageReaderBusyError`` when no child came free in time."""
        size = visible_text_size(markup)
        if size > max_text:
            raise PageTooLargeToReadError(
                f"The page has too much text to scrap: about {format_size(size, max_text)}, the limit is "
                f"{format_size(max_text, size)} (change capture.max_bytes in settings, or scrap a selection of it)."
            )
        return self.read_page(url, markup.encode("utf-8", "replace"))

    def read_page(
        self,
        url: str,
        body: bytes,
        content_type: str = "text/html",
        charset: str | None = "utf-8",
        *,
        between: Callable[[], None] = lambda: None,
    ) -> tuple[str, str]:
        """(title, text) of a page's ``body`` (HTML or plain text, as ``web.fetch.Download`` holds it); refused as
        ``read`` refuses, or with ``PageUnreadableError`` when it has no readable text. ``between`` is called
        about every ``LOOK_SECONDS`` while the page waits or is read: what it raises (a job cancelled, the app
        closing) stops the reading and its child."""
        child = self._take(between)
        healthy = False
        try:
            try:
                answer, value = child.read((url, content_type, charset, body), self.seconds, between)
            except TimeoutError:
                raise PageTooLargeToReadError(
                    f"Reading the page took longer than {self.seconds:g} s, so it was left out "
                    "(scrap a selection of it instead)."
                ) from None
            except (EOFError, OSError) as exc:
                if child.closings != self._closings:
                    raise PageReaderBusyError("The page was not read: its reader was stopped.") from exc
                raise self._too_large() from exc
            if answer == "memory":
                raise self._too_large()
            healthy = True
            if answer == "refused":
                raise PageUnreadableError(value)
            if answer == "failed":
                raise RuntimeError(f"Reading a page failed in its process:\n{value}")
            title, text = value
            return str(title), str(text)
        finally:
            self._give_back(child, healthy)

    def _too_large(self) -> PageTooLargeToReadError:
        bound = f" (more than {format_size(self.memory_bytes)})" if self.memory_bytes else ""
        return PageTooLargeToReadError(
            f"Reading the page needed more memory than SAN Desktop gives it{bound}, so it was left out "
            "(scrap a selection of it instead)."
        )

    def close(self) -> None:
        """Stop every child (one reading is killed: its page is refused); a later read starts a new one."""
        with self._lock:
            self._closings += 1
            children, self._every = set(self._every), set()
            self._idle.clear()
            if self._reaper is not None:
                self._reaper.cancel()
                self._reaper = None
            self._lock.notify_all()
        for child in children:
            child.kill()

    # --- the children -----------------------------------------------------------------------------

    def _take(self, between: Callable[[], None]) -> _Child:
        deadline = time.monotonic() + self.seconds
        with self._lock:
            while True:
                if self._idle:
                    self._taken += 1
                    return self._idle.pop()[0]
                if self._taken < self._most:
                    self._taken += 1
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise PageReaderBusyError(
                        f"SAN Desktop is reading {self._most} other pages: send this one again in a moment."
                    )
                self._lock.wait(min(left, LOOK_SECONDS))
                between()
        try:
            child = _Child(self.memory_bytes, self._closings)  # (started outside the lock: a second or so)
        except BaseException:
            with self._lock:
                self._taken -= 1
                self._lock.notify()
            raise
        with self._lock:
            self._every.add(child)
        return child

    def _give_back(self, child: _Child, healthy: bool) -> None:
        with self._lock:
            self._taken -= 1
            keep = healthy and child in self._every
            if keep:
                self._idle.append((child, time.monotonic()))
                self._schedule_reaper()
            else:
                self._every.discard(child)
            self._lock.notify()
        if not keep:
            child.kill()

    def _schedule_reaper(self) -> None:
        if self._reaper is None:
            self._reaper = threading.Timer(self._idle_seconds, self._reap)
            self._reaper.daemon = True
            self._reaper.start()

    def _reap(self) -> None:
        """Stop the children idle for ``idle_seconds`` (again later for those that went idle since)."""
        now = time.monotonic()
        with self._lock:
            self._reaper = None
            stale = [child for child, since in self._idle if now - since >= self._idle_seconds]
            self._idle = [(child, since) for child, since in self._idle if child not in stale]
            self._every.difference_update(stale)
            if self._idle:
                self._schedule_reaper()
        for child in stale:
            child.stop()
