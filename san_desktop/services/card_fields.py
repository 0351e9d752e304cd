"""What a person types into a card, checked: each refusal is a sentence saying what to change."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from san_desktop.ai.base import DEFAULT_CATEGORIES, MAX_TAG_LENGTH, MAX_TAGS
from san_desktop.core.errors import SanError

MAX_TITLE = 200  # the column's length
MAX_SUMMARY = 2000


class CardEditError(SanError):
    """An edit, an undo or a request to analyse again that cannot be done, and why."""


def split_tags(text: str) -> tuple[str, ...]:
    """Tags as typed: separated by commas, without a leading "#", blanks and repeats (ignoring case) dropped."""
    return _distinct(part.strip().lstrip("#").strip() for part in text.split(","))


def _distinct(names: Iterable[str]) -> tuple[str, ...]:
    seen: set[str] = set()
    kept: list[str] = []
    for name in names:
        if name and name.casefold() not in seen:
            seen.add(name.casefold())
            kept.append(name)
    return tuple(kept)


def clean_title(title: str) -> str:
    cleaned = " ".join(title.split())
    if not cleaned:
        raise CardEditError("A card needs a title: the title given is empty.")
    if len(cleaned) > MAX_TITLE:
        raise CardEditError(f"A title has at most {MAX_TITLE} characters (this one has {len(cleaned)}).")
    return cleaned


def clean_summary(summary: str) -> str:
    cleaned = summary.strip()
    if len(cleaned) > MAX_SUMMARY:
        raise CardEditError(f"A summary has at most {MAX_SUMMARY} characters (this one has {len(cleaned)}).")
    return cleaned


def clean_tag(tag: str) -> str:
    cleaned = " ".join(tag.strip().lstrip("#").split())
    if not cleaned:
        raise CardEditError("A tag needs a name: the one given is empty.")
    if len(cleaned) > MAX_TAG_LENGTH:
        raise CardEditError(f"A tag has at most {MAX_TAG_LENGTH} characters: “{cleaned[:50]}” has {len(cleaned)}.")
    return cleaned


def clean_tags(tags: Sequence[str]) -> tuple[str, ...]:
    cleaned = _distinct(clean_tag(tag) for tag in tags if tag.strip().lstrip("#").strip())
    if len(cleaned) > MAX_TAGS:
        raise CardEditError(f"A card has at most {MAX_TAGS} tags; you gave {len(cleaned)}: {', '.join(cleaned)}.")
    return cleaned


def category_named(name: str) -> str:
    """The category of the product's list called ``name`` (ignoring case), in its own spelling."""
    by_key = {category.casefold(): category for category in DEFAULT_CATEGORIES}
    found = by_key.get(" ".join(name.split()).casefold())
    if found is None:
        raise CardEditError(f"There is no category “{name.strip()}”. Choose one of: {', '.join(DEFAULT_CATEGORIES)}.")
    return found


def fields_phrase(fields: Sequence[str]) -> str:
    """Card fields as a sentence says them: "title", "title and tags", "title, summary and tags"."""
    if len(fields) <= 1:
        return "".join(fields)
    return f"{', '.join(fields[:-1])} and {fields[-1]}"


def renamed_tags(before: Sequence[str], typed: str) -> list[tuple[str, str]]:
    """The tags renamed in place, as (old, new): when ``typed`` (comma-separated, as ``split_tags`` reads it,
    repeats kept) lists as many tags as ``before``, each position whose tag reads otherwise. A tag added or
    removed is no rename."""
    listed = [name for name in (part.strip().lstrip("#").strip() for part in typed.split(",")) if name]
    if len(listed) != len(before):
        return []
    return [(old, new) for old, new in zip(before, listed, strict=True) if old != new]
