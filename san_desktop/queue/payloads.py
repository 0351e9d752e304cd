"""Typed job payloads: a frozen dataclass per job type that needs parameters, stored as JSON in
``async_jobs.payload``. Unknown keys are refused, so a typo cannot silently become a default."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import TypeVar

P = TypeVar("P")


@dataclass(frozen=True)
class CardAnalysisPayload:
    """CARD_ANALYSIS: ``embed_only`` re-embeds the existing card (the embedding model changed, or a person
    edited its words). ``replace_edits_as_of``: the person asked for the analysis to replace the fields they
    edited, as they were when the card was last changed at that moment (ISO time); an edit made after
    the request is kept. Without it every edited field is kept."""

    embed_only: bool = False
    replace_edits_as_of: str | None = None


@dataclass(frozen=True)
class StarSyncPayload:
    """GITHUB_STAR_SYNC: ``full`` walks every page (and marks unstarred repositories gone); ``rank``
    asks for a ranking run once the sync is done."""

    full: bool = False
    rank: bool = True


def dump_payload(payload: object) -> str:
    return json.dumps(asdict(payload), sort_keys=True)  # type: ignore[call-overload]


def load_payload(cls: type[P], text: str | None) -> P:
    """The payload of a job (its type's defaults when there is none)."""
    data = json.loads(text) if text else {}
    known = {item.name for item in fields(cls)}  # type: ignore[arg-type]
    if not isinstance(data, dict) or set(data) - known:
        raise ValueError(f"not a {cls.__name__}: {text!r}")
    return cls(**data)
