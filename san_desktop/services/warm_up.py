"""What is loaded before it is first needed (off the GUI thread, once the window shows): the embedded sentence
encoder when the embedded AI is chosen, and the article extractor; and the search's query vectors, which only the
embedded encoder makes (a query to a remote server would make every keystroke wait on the network: those search
by words)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from san_desktop.core.settings import AISettings

if TYPE_CHECKING:
    from san_desktop.services.search import QueryVector


def warm_up_encoder(ai: AISettings) -> str | None:
    """Load the embedded sentence encoder now when the embedded AI is chosen; the sentence that says why it could
    not load, or None."""
    if ai.provider != "local":
        return None
    from san_desktop.ai import encoder

    return None if encoder.warm_up() else encoder.failure()


def warm_up_extractor() -> None:
    """Load the article extractor now, not when the first page arrives."""
    from san_desktop.web import extract

    extract.warm_up()


def query_embedder(ai: Callable[[], AISettings]) -> Callable[[str], QueryVector | None]:
    """A search's vector, when the embedded sentence encoder is what embeds the cards (``ai``: the settings in use
    at each search); None otherwise."""

    def embed(text: str) -> QueryVector | None:
        if ai().provider != "local":
            return None
        from san_desktop.ai import encoder
        from san_desktop.services.search import QueryVector

        if not encoder.usable():
            return None
        try:
            return QueryVector(encoder.SEMANTIC_EMBEDDING_MODEL, encoder.encode([text])[0])
        except encoder.EncoderUnavailableError:
            return None

    return embed
