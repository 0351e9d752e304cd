"""Building the configured provider, and holding it while settings may change.

Credentials are handed in (a function that reads the API key when a provider is built), so this layer
never reaches into the keyring or the services above it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from san_desktop.core.settings import AISettings

if TYPE_CHECKING:
    from san_desktop.ai.base import AIProvider

ApiKeyReader = Callable[[], str | None]


def _no_key() -> None:
    return None


def embedding_model_of(settings: AISettings) -> str:
    """The vector space the provider of ``settings`` embeds into, without building the provider (nor
    loading the sentence encoder: it names the encoder's space until the encoder failed to load)."""
    if settings.provider != "local":
        return settings.embedding_model
    from san_desktop.ai.encoder import embedding_model

    return embedding_model()


def make_provider(settings: AISettings, api_key: str | None = None, *, own_process: bool = False) -> AIProvider:
    """The provider of ``settings`` (its modules load here: a command that needs no AI loads none);
    ``own_process``: the embedded provider computes in child processes (``ai.own_process``)."""
    if settings.provider == "local":
        if own_process:
            from san_desktop.ai.own_process import OwnProcessProvider

            return OwnProcessProvider(time_limit_seconds=settings.local_time_limit_seconds)
        from san_desktop.ai.local import LocalProvider

        return LocalProvider(time_limit_seconds=settings.local_time_limit_seconds)
    from san_desktop.ai.openai_compat import OpenAICompatibleProvider, OpenAISettings

    return OpenAICompatibleProvider(
        OpenAISettings(
            base_url=settings.base_url,
            chat_model=settings.chat_model,
            embedding_model=settings.embedding_model,
            api_key=api_key,
            timeout_seconds=settings.timeout_seconds,
            temperature=settings.temperature,
            til_cards_per_call=settings.til_cards_per_call,
        )
    )


class ProviderSource:
    """The provider jobs use, rebuilt when the settings change. Thread-safe.

    A job holds its provider for its whole run (``lease``): changing the settings meanwhile gives later
    jobs a new provider, and the old one's HTTP client is closed only when the last job using it is done.
    """

    def __init__(self, settings: AISettings, api_key: ApiKeyReader = _no_key) -> None:
        self._api_key = api_key
        self._lock = threading.Lock()
        self._settings = settings
        self._provider: AIProvider | None = None
        self._own_process = False
        self._leases: dict[int, int] = {}  # id(provider) -> jobs using it
        self._retired: dict[int, AIProvider] = {}

    @property
    def settings(self) -> AISettings:
        with self._lock:
            return self._settings

    def update(self, settings: AISettings) -> None:
        with self._lock:
            old, self._provider = self._provider, None
            self._settings = settings
            if old is None:
                return
            if self._leases.get(id(old), 0):
                self._retired[id(old)] = old  # closed by the last lease's end
                return
        _close(old)

    def compute_in_own_process(self) -> None:
        """From now on the embedded provider computes in child processes (the window asks for it: see
        ``ai.own_process``); the provider built until now is retired as by a change of settings."""
        with self._lock:
            self._own_process = True
        self.update(self.settings)

    def warm_up(self) -> str | None:
        """Start what the provider needs before its first job (the embedded one's child process), off the
        GUI thread; why it works in-process instead, or None."""
        with self.lease() as provider:
            warm_up = getattr(provider, "warm_up", None)
            if callable(warm_up):
                warm_up()
            failure: str | None = getattr(provider, "failure", None)
            return failure

    def close(self) -> None:
        """Close the current provider (its children, its HTTP client); the next job builds a new one."""
        self.update(self.settings)

    def interrupt(self) -> None:
        """Cut short the calls under way of every provider jobs hold (the app is closing, from any thread): a
        job waiting on a slow AI server, or on the embedded AI's process, gets an error at once (its runner
        gives it back to the queue). A provider interrupted is not used again: the next job builds a new one."""
        with self._lock:
            providers = [provider for provider in (self._provider, *self._retired.values()) if provider is not None]
            self._provider = None
            unused = [provider for provider in providers if not self._leases.get(id(provider), 0)]
            for provider in providers:  # those in use: closed once their last lease ends
                if provider not in unused:
                    self._retired[id(provider)] = provider
        for provider in providers:
            interrupt = getattr(provider, "interrupt", None)  # the embedded in-process provider has nothing to cut
            if callable(interrupt):
                interrupt()
        for provider in unused:
            _close(provider)

    def _current(self) -> AIProvider:
        if self._provider is None:
            remote = self._settings.provider != "local"  # the keyring is asked only when a key is needed
            self._provider = make_provider(
                self._settings, self._api_key() if remote else None, own_process=self._own_process
            )
        return self._provider

    def get(self) -> AIProvider:
        """The current provider, for a quick question (its similarity threshold); jobs use ``lease``."""
        with self._lock:
            return self._current()

    @contextmanager
    def lease(self) -> Iterator[AIProvider]:
        with self._lock:
            provider = self._current()
            self._leases[id(provider)] = self._leases.get(id(provider), 0) + 1
        try:
            yield provider
        finally:
            with self._lock:
                key = id(provider)
                self._leases[key] -= 1
                done = self._leases[key] == 0
                if done:
                    del self._leases[key]
                retired = self._retired.pop(key, None) if done else None
            if retired is not None:
                _close(retired)

    def embedding_model(self) -> str:
        return embedding_model_of(self.settings)


def _close(provider: AIProvider) -> None:
    close = getattr(provider, "close", None)  # the HTTP provider holds a client; the embedded one nothing
    if callable(close):
        close()
