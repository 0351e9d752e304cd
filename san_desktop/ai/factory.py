"""Building the configured provider, and holding it while settings may change.

Credentials are handed in (a function that reads the API key when a provider is built), so this layer
never reaches into the keyring or the services above it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from san_desktop.ai.base import AIProvider
from san_desktop.ai.local import LocalProvider
from san_desktop.ai.openai_compat import OpenAICompatibleProvider, OpenAISettings
from san_desktop.core.settings import AISettings

ApiKeyReader = Callable[[], str | None]


def _no_key() -> None:
    return None


def embedding_model_of(settings: AISettings) -> str:
    """The vector space the provider of ``settings`` embeds into, without building the provider."""
    return LocalProvider.embedding_model if settings.provider == "local" else settings.embedding_model


def make_provider(settings: AISettings, api_key: str | None = None) -> AIProvider:
    if settings.provider == "local":
        return LocalProvider()
    return OpenAICompatibleProvider(
        OpenAISettings(
            base_url=settings.base_url,
            chat_model=settings.chat_model,
            embedding_model=settings.embedding_model,
            api_key=api_key,
            timeout_seconds=settings.timeout_seconds,
            temperature=settings.temperature,
        )
    )


class ProviderSource:
    """The provider jobs use; rebuilt when the settings change. Thread-safe."""

    def __init__(self, settings: AISettings, api_key: ApiKeyReader = _no_key) -> None:
        self._api_key = api_key
        self._lock = threading.Lock()
        self._settings = settings
        self._provider: AIProvider | None = None

    @property
    def settings(self) -> AISettings:
        with self._lock:
            return self._settings

    def update(self, settings: AISettings) -> None:
        with self._lock:
            old, self._provider = self._provider, None
            self._settings = settings
        if isinstance(old, OpenAICompatibleProvider):
            old.close()

    def get(self) -> AIProvider:
        with self._lock:
            if self._provider is None:
                self._provider = make_provider(self._settings, self._api_key())
            return self._provider

    def embedding_model(self) -> str:
        return embedding_model_of(self.settings)
