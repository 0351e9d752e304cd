"""How a page download fails: for good (``PageFetchError``) or for now (``PageUnreachableError``)."""

from __future__ import annotations

from san_desktop.core.errors import PermanentError, TransientError
from san_desktop.core.text import format_size


class PageFetchError(PermanentError):
    """The page cannot be had by asking again: 404, not a web page, too large, a redirect loop."""


class PageUnreachableError(TransientError):
    """The page may come later: a timeout, a refused connection, a server error."""


class PageTooLargeError(PageFetchError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"The page is larger than {format_size(limit)} (change capture.fetch_max_bytes in settings).")


class AddressRefusedError(PageFetchError):
    """A redirect led to a local or private address that the user never asked for."""


class PageTooLargeToReadError(PermanentError):
    """A page (the browser's, or a link's download) is not read: too much text, or too slow or too large to read
    within the page reader's bounds."""


class PageUnreadableError(PermanentError):
    """A page (the browser's, or a link's download) was read and has nothing to keep (no readable text)."""


class PageReaderBusyError(TransientError):
    """Every reader of pages is busy past the time bound: the page may be sent again in a moment."""
