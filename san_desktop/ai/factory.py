"""Building the configured provider, and holding it while settings may change."""

from __future__ import annotations

import threading

from san_desktop.ai.base import AIProvider
from san_desktop.ai.local import LocalProvider
from san_desktop.ai.openai_compat import OpenAICompatibleProvider, OpenAISettings
from san_desktop.core.settings import AISettings
from san_desktop.services.secrets import AI_API_KEY, get_secret


def make_provider(settings: AISettings) -> AIProvider:
    if settings.provider == "local":
        return LocalProvider()
    return OpenAICompatibleProvider(
        OpenAISettings(
            base_url=settings.base_url,
            chat_model=settings.chat_model,
            embedding_model=settings.embedding_model,
            api_key=get_secret(AI_API_KEY),
            timeout_seconds=settings.timeout_seconds,
            temperature=settings.temperature,
        )
    )


class ProviderSource:
    """The provider jobs use; rebuilt when the settings change. Thread-safe."""

    def __init__(self, settings: AISettings) -> None:
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
                self._provider = make_provider(self._settings)
            return self._provider

    def embedding_model(self) -> str:
        settings = self.settings
        return LocalProvider.embedding_model if settings.provider == "local" else settings.embedding_model
