"""The page title readable_page gives: the page's own metadata first (Open Graph, JSON-LD), then its
title or its one heading; entities decoded, whitespace collapsed."""

from __future__ import annotations

import pytest

from san_desktop.web.extract import readable_page
from san_desktop.web.fetch import Download

ARTICLE = "<p>" + "A checkpoint copies the write-ahead log back into the database file. " * 6 + "</p>"


def title_of(head: str, body: str = "") -> str:
    page = f"<html><head>{head}</head><body>{body}<article>{ARTICLE}</article></body></html>"
    title, text = readable_page(Download("https://blog.example/post", "text/html", "utf-8", page.encode()))
    assert "write-ahead log" in text
    return title


@pytest.mark.parametrize(
    ("head", "body", "expected"),
    [
        (
            '<meta property="og:title" content="WAL &amp; checkpoints"><title>Blog | Home</title>',
            "",
            "WAL & checkpoints",
        ),
        (
            '<script type="application/ld+json">{"@context": "https://schema.org", "@type": "BlogPosting", '
            '"headline": "체크포인트의 원리"}</script>',
            "",
            "체크포인트의 원리",
        ),
        ("<title>  How   SQLite\n commits  </title>", "", "How SQLite commits"),
        ("", "<h1>Only a heading</h1>", "Only a heading"),
    ],
    ids=["open-graph", "json-ld", "title-tag", "one-heading"],
)
def test_the_title_comes_from_the_pages_metadata_then_its_title_or_heading(head: str, body: str, expected: str) -> None:
    assert title_of(head, body) == expected


def test_a_page_without_any_title_gets_none() -> None:
    assert title_of("") == ""
