"""The embedded provider's work in processes of its own, while the window runs.

The embedded provider is Python that computes: its tokenizer, key terms and summaries hold the GIL for tens
of milliseconds a card. In the window's process every repaint of a table calls into Python a few hundred
times and each call waits for that GIL, so a card being made while pages arrive was the window's worst lag
(``make bench``: the endpoint's burst). Here the card is made in a child process; the job's thread only waits
on a pipe, which holds no GIL. ``san jobs run`` has no window to keep responsive and calls in-process.

At most ``children`` children, one per job the window runs at once (``Settings.ai_threads_with_window``; a
call while all are busy waits for one, as one arriving while the first is still starting does), started with
``spawn`` (forking a process with Qt's threads is unsafe), each loading its own sentence encoder; a child
lives until the provider is closed, and leaves by itself when the window's process dies (its pipe closes).
A child that dies under a job fails that job as transient (it is tried again, in a new child); one that cannot
start, or whose encoder does not load where the window's did, makes the provider work in-process from then
on, with the reason logged. Only what crosses the pipe goes there: writing a TIL reads and keeps parts
through the database, so it stays in-process (once a day, and not while pages arrive).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import pickle
import threading
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

from san_desktop.ai import encoder
from san_desktop.ai.base import CardDraft, KeptParts, QuizDraft, TilCard, TilDraft, Vectors
from san_desktop.ai.local import LocalProvider
from san_desktop.core.enums import QuizType
from san_desktop.core.errors import KnownError, PermanentError, TransientError
from san_desktop.core.failpoints import pause_here
from san_desktop.core.redact import CHAIN_SEPARATOR, cause_chain, describe
from san_desktop.core.settings import LOCAL_AI_THREADS_WITH_WINDOW

log = logging.getLogger(__name__)

START_SECONDS = 60.0  # a child that has not loaded its model by then is not coming
STOP_SECONDS = 2.0  # a child asked to leave that has not left by then is terminated
_CALLS = frozenset({"analyze_card", "refine_scrap", "make_quizzes", "embed"})


class ChildProcessStoppedError(TransientError):
    """The child process died under a call (its job is tried again, in a new one)."""


class ChildCauseError(KnownError):
    """The causes of an error raised in the child, as the chain's text (the objects stayed there)."""


def serve(connection: Connection, time_limit_seconds: float | None) -> None:
    """The child's loop: load the encoder, say which vector space it embeds into, then answer calls until
    told to stop or until the parent is gone."""
    from san_desktop.core.thread_priority import lower_current_thread

    lower_current_thread()  # background work, as the job threads it serves
    provider = LocalProvider(time_limit_seconds=time_limit_seconds)
    encoder.warm_up()
    pause_here("own_process.warm_up")  # (tests: a child still starting, as a slow machine's is)
    try:
        connection.send(provider.embedding_model)
        while True:
            message = connection.recv()
            if message is None:
                return
            name, args = message
            try:
                answer: tuple[bool, Any, str | None] = (True, getattr(provider, name)(*args), None)
            except Exception as exc:  # every error goes back to the job that asked, as the job would have met it
                answer = (False, portable(exc), causes_of(exc))
            try:
                connection.send(answer)
            except (EOFError, OSError):
                raise
            except Exception as exc:  # an answer that cannot be pickled (nothing is written before that)
                connection.send((False, RuntimeError(describe(exc)), None))
    except (EOFError, OSError):
        return  # the parent is gone


def portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling as itself, else an error of the same kind (permanent, transient or a
    bug) carrying its sentence: the runner decides on retrying by the kind."""
    try:
        copy = pickle.loads(pickle.dumps(exc))
        if type(copy) is type(exc) and str(copy) == str(exc):
            return exc
    except Exception:
        log.debug("Not picklable as itself: %r", exc, exc_info=True)
    if isinstance(exc, PermanentError):
        return PermanentError(describe(exc))
    if isinstance(exc, TransientError):
        return TransientError(describe(exc))
    return RuntimeError(describe(exc))


def causes_of(exc: BaseException) -> str | None:
    chain = cause_chain(exc)[1:]
    return CHAIN_SEPARATOR.join(describe(item) for item in chain) if chain else None


class _Child:
    def __init__(self, time_limit_seconds: float | None) -> None:
        context = multiprocessing.get_context("spawn")
        self._connection, theirs = context.Pipe()
        self.process = context.Process(
            target=serve, args=(theirs, time_limit_seconds), name="san-desktop-ai", daemon=True
        )
        self.process.start()
        theirs.close()  # ours is the only end left here: the child's death reads as EOF
        self.embedding_model = ""

    def wait_until_ready(self) -> None:
        if not self._connection.poll(START_SECONDS):
            raise TimeoutError(f"the embedded AI's process did not start within {START_SECONDS:.0f} s")
        self.embedding_model = self._connection.recv()

    def call(self, name: str, args: tuple[Any, ...]) -> Any:
        try:
            self._connection.send((name, args))
            ok, value, causes = self._connection.recv()
        except (EOFError, OSError) as exc:
            self.process.join(STOP_SECONDS)
            raise ChildProcessStoppedError(
                f"The embedded AI's process stopped (exit code {self.process.exitcode}) while it worked on "
                "this; it will be tried again."
            ) from exc
        if ok:
            return value
        if causes:
            raise value from ChildCauseError(causes)
        raise value

    def terminate(self) -> None:
        """End the child now, whatever it does (still starting, or computing)."""
        self.process.terminate()
        self.process.join(STOP_SECONDS)
        self._connection.close()

    def stop(self) -> None:
        with contextlib.suppress(OSError):  # gone already
            self._connection.send(None)
        self.process.join(STOP_SECONDS)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(STOP_SECONDS)
        self._connection.close()


class OwnProcessProvider:
    """The embedded provider, its computing done in child processes (see the module's docstring)."""

    def __init__(self, time_limit_seconds: float | None, children: int = LOCAL_AI_THREADS_WITH_WINDOW) -> None:
        self._time_limit = time_limit_seconds
        self._here = LocalProvider(time_limit_seconds=time_limit_seconds)
        self._most = children
        self._lock = threading.Condition()
        self._idle: list[_Child] = []
        self._busy: set[_Child] = set()
        self._starting = 0  # children being started: they count against ``children``
        self._warming: set[_Child] = set()  # children started whose encoder is loading (not ready yet)
        self._closed = False
        self.failure: str | None = None  # why the work is done in-process instead, once it is

    name = "local"

    @property
    def embedding_model(self) -> str:
        return self._here.embedding_model

    @property
    def similarity_threshold(self) -> float:
        return self._here.similarity_threshold

    def process_ids(self) -> list[int]:
        """The children's process ids (those started and not stopped)."""
        with self._lock:
            return [child.process.pid for child in [*self._idle, *self._busy] if child.process.pid is not None]

    def warm_up(self) -> bool:
        """Start a child now (off the GUI thread), not when the first card is made; whether one runs."""
        child = self._take()
        if child is not None:
            self._give_back(child)
        return child is not None

    def analyze_card(self, text: str, categories: Sequence[str]) -> CardDraft:
        result: CardDraft = self._call("analyze_card", text, list(categories))
        return result

    def refine_scrap(self, text: str) -> str:
        result: str = self._call("refine_scrap", text)
        return result

    def make_quizzes(self, cards: Sequence[TilCard], quiz_types: Sequence[QuizType]) -> list[QuizDraft]:
        result: list[QuizDraft] = self._call("make_quizzes", list(cards), list(quiz_types))
        return result

    def embed(self, texts: Sequence[str]) -> Vectors:
        result: Vectors = self._call("embed", list(texts))
        return result

    def write_til(self, day: str, cards: Sequence[TilCard], kept: KeptParts | None = None) -> TilDraft:
        return self._here.write_til(day, cards, kept)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            children, self._idle = self._idle, []
            self._lock.notify_all()
        for child in children:
            child.stop()  # busy ones are stopped when their call returns

    def interrupt(self) -> None:
        """End the calls under way at once (the app is closing; any thread): their children are terminated, so
        each call fails as a child dying under it does, and so are children still starting (a call or the
        warm-up waiting for one gets no child); no call is made after this."""
        with self._lock:
            self._closed = True
            cut_short = [*self._busy, *self._warming]
            self._lock.notify_all()
        for child in cut_short:
            child.process.terminate()  # (its caller's thread then reads the pipe's end, and stops the child)
        self.close()

    def _call(self, name: str, *args: Any) -> Any:
        assert name in _CALLS
        child = self._take()
        if child is None:
            return getattr(self._here, name)(*args)
        try:
            result = child.call(name, args)
        except ChildProcessStoppedError:
            self._drop(child)
            raise
        except BaseException:
            self._give_back(child)
            raise
        self._give_back(child)
        return result

    def _take(self) -> _Child | None:
        """An idle child, or a new one when fewer than ``children`` run, else the next one given back;
        None when the work is to be done in-process."""
        with self._lock:
            while True:
                if self.failure is not None or self._closed:
                    return None
                if self._idle:
                    idle = self._idle.pop()
                    self._busy.add(idle)
                    return idle
                if len(self._busy) + self._starting < self._most:
                    self._starting += 1
                    break
                self._lock.wait()
        child = self._start()
        with self._lock:
            self._starting -= 1
            if child is not None:
                self._busy.add(child)
            self._lock.notify_all()
        return child

    def _start(self) -> _Child | None:
        child: _Child | None = None
        try:
            child = _Child(self._time_limit)
            with self._lock:
                closed = self._closed
                if not closed:
                    self._warming.add(child)
            if closed:  # closed or interrupted while it was being made: not wanted any more
                child.terminate()
                return None
            child.wait_until_ready()
        except Exception as exc:
            with self._lock:
                if child is not None:
                    self._warming.discard(child)
                closed = self._closed
            if closed:  # the app is closing: not a failure to start (a child terminated by ``interrupt``)
                log.debug("The embedded AI's process was stopped while it started")
                if child is not None:
                    child.stop()
                return None
            self._give_up(
                f"The embedded AI could not start its own process ({describe(exc)}); it works in the window's "
                "process instead, and the window may answer more slowly while cards are made.",
                exc,
            )
            if child is not None:
                child.stop()
            return None
        with self._lock:
            self._warming.discard(child)
        if child.embedding_model != self._here.embedding_model:
            self._give_up(
                f"The embedded AI's process embeds with {child.embedding_model}, the window with "
                f"{self._here.embedding_model}; it works in the window's process instead.",
                None,
            )
            child.stop()
            return None
        return child

    def _give_back(self, child: _Child) -> None:
        with self._lock:
            self._busy.discard(child)
            self._lock.notify_all()
            if not self._closed:
                self._idle.append(child)
                return
        child.stop()

    def _drop(self, child: _Child) -> None:
        with self._lock:
            self._busy.discard(child)
            self._lock.notify_all()
        child.stop()

    def _give_up(self, why: str, exc: BaseException | None) -> None:
        with self._lock:
            first = self.failure is None
            self.failure = why[:1000]
            self._lock.notify_all()
        if first:
            log.warning("%s", why, exc_info=exc)
