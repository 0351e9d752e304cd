"""Web addresses: which text is one, and the normalised form that identifies a page."""

from __future__ import annotations

import pytest

from san_desktop.core.urls import is_web_url, normalize_url, without_userinfo


@pytest.mark.parametrize(
    ("given", "normalised"),
    [
        ("HTTPS://Example.COM/Path/", "https://example.com/Path"),
        ("https://example.com:443/a?b=1#part", "https://example.com/a?b=1"),
        ("http://example.com:80", "http://example.com/"),
        ("http://example.com:8080/x/", "http://example.com:8080/x"),
        ("https://example.com/a?utm_source=x&id=2&fbclid=y&UTM_Campaign=z&gclid=1", "https://example.com/a?id=2"),
        ("https://example.com/read?ref=home&spm=a.b", "https://example.com/read?ref=home"),
        ("https://user:secret@example.com/", "https://example.com/"),
        ("https://user@example.com/a", "https://example.com/a"),
        ("https://example.com/한글 문서", "https://example.com/%ED%95%9C%EA%B8%80%20%EB%AC%B8%EC%84%9C"),
        ("https://example.com/%ED%95%9C%EA%B8%80", "https://example.com/%ED%95%9C%EA%B8%80"),
    ],
)
def test_the_same_page_normalises_to_one_address(given: str, normalised: str) -> None:
    assert normalize_url(given) == normalised
    assert normalize_url(normalised) == normalised  # idempotent


@pytest.mark.parametrize(
    "text", ["mailto:a@example.com", "ftp://example.com/f", "https://", "example.com", "http://x:port/"]
)
def test_other_addresses_are_not_web_pages(text: str) -> None:
    with pytest.raises(ValueError, match="not a web address"):
        normalize_url(text)


def test_a_web_url_is_one_address_and_nothing_else() -> None:
    assert is_web_url("  https://sqlite.org/wal.html\n")
    assert not is_web_url("see https://sqlite.org/wal.html")
    assert not is_web_url("https://a.example/x https://b.example/y")
    assert not is_web_url("file:///etc/passwd")


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("https://user:secret@example.com/p?q=1#f", "https://example.com/p?q=1#f"),
        ("HTTP://user@Example.com", "HTTP://Example.com"),
        ("ftp://user:secret@files.example/notes.txt", "ftp://files.example/notes.txt"),
        ("https://a@b:c@example.com:8443/x", "https://example.com:8443/x"),  # the last @ ends it
        ("https://example.com/path@not-userinfo?at=@", "https://example.com/path@not-userinfo?at=@"),
        ("https://example.com/", "https://example.com/"),
        ("mailto:someone@example.com", "mailto:someone@example.com"),
        ("notes/a@b.md", "notes/a@b.md"),
        ("Write-Ahead Logging — SQLite", "Write-Ahead Logging — SQLite"),
    ],
)
def test_an_address_is_kept_without_its_user_and_password(given: str, kept: str) -> None:
    assert without_userinfo(given) == kept
    assert without_userinfo(kept) == kept


def test_an_address_with_a_lone_surrogate_is_not_a_web_address() -> None:
    """JSON's ``\\ud800`` or bytes that are not UTF-8 leave lone surrogates, which no database stores."""
    for url in ("https://b.example/\ud800x", "https://b\ud800.example/x"):
        with pytest.raises(ValueError, match="not a web address"):
            normalize_url(url)
