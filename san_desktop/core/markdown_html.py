"""Markdown → safe HTML for everything the app renders from generated or edited text.

``markdown`` (with fenced code) makes the HTML, ``nh3`` keeps only a small set of tags: no scripts, no
styles, no images or other remote resources, and links only to http/https (opened in the browser by the
view, never inside the app)."""

from __future__ import annotations

import markdown as markdown_lib
import nh3

ALLOWED_TAGS = {
    "a", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "li",
    "ol", "p", "pre", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "code": {"class"}}


def to_safe_html(text: str) -> str:
    html = markdown_lib.markdown(text, extensions=["fenced_code", "tables"], output_format="html")
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https"},
        link_rel="noopener noreferrer nofollow",
    )
