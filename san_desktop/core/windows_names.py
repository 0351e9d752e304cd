"""The names Windows keeps for devices: ``CON``, ``PRN``, ``AUX``, ``NUL``, ``COM0``-``COM9``,
``LPT0``-``LPT9`` (and with ``¹²³``), ``CONIN$``, ``CONOUT$``, in any case and with any extension (``nul.txt``
and ``Com1.tar.gz`` open the device too). One definition for every name SAN Desktop makes or checks: the
Markdown export's file names and the paths it commits to a repository."""

from __future__ import annotations

RESERVED_NAMES = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
    | {f"{device}{digit}" for device in ("COM", "LPT") for digit in [*"0123456789", "¹", "²", "³"]}
)


def is_reserved_name(name: str) -> bool:
    """Whether Windows takes the file name ``name`` (one path part) for a device: its part before the first
    dot, without the spaces Windows drops, is one of ``RESERVED_NAMES`` in any case."""
    return name.split(".")[0].rstrip(" ").upper() in RESERVED_NAMES
