"""Reading HTTP headers that servers send more than once (issue 23): a header sent twice — GitHub's own
``x-ratelimit-remaining: 0`` beside a proxy's ``4990`` — reads as "4990, 0" once joined, and must still
say that the limit is used up."""

from __future__ import annotations

import math


def header_pieces(value: str | None) -> list[str]:
    """The comma-separated values of a (possibly repeated and joined) header, trimmed, empty ones left out."""
    return [piece.strip() for piece in (value or "").split(",") if piece.strip()]


def header_numbers(value: str | None) -> list[float]:
    """Every finite, non-negative number a header carries; what is not a number is left out."""
    numbers = []
    for piece in header_pieces(value):
        try:
            number = float(piece)
        except ValueError:
            continue
        if math.isfinite(number):
            numbers.append(max(0.0, number))
    return numbers


def limit_used_up(remaining: str | None) -> bool:
    """Whether an ``x-ratelimit-remaining`` header says no request is left (any copy of it at 0)."""
    numbers = header_numbers(remaining)
    return bool(numbers) and min(numbers) <= 0
