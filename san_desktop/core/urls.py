"""Links as scraps: recognising a web address and the normalised form that identifies it (issue 16).

Two addresses name the same page when they differ only in the case of the scheme or host, a default
port, a trailing slash, a fragment, tracking parameters (``utm_*``, ``fbclid``…) or a ``user:password@``:
they normalise to the same string, and the scrap is deduplicated by it. No address is stored with its
``user:password@`` (issue 38): ``without_userinfo`` is what every other stored address goes through.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from san_desktop.core.text import without_surrogates

_SINGLE_URL = re.compile(r"^https?://[^\s<>\"]+$", re.I)
# a scheme and its authority, up to where the path, query or fragment starts (a backslash ends it too, as
# browsers read one in http(s) addresses)
_AUTHORITY = re.compile(r"^(\s*[A-Za-z][A-Za-z0-9+.-]*://)([^/?#\\]*)")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_TRACKING_PREFIXES = ("utm_", "pk_", "mtm_", "hsa_")
_TRACKING_NAMES = frozenset(
    """fbclid gclid gclsrc dclid gbraid wbraid msclkid yclid twclid igshid mc_cid mc_eid _hsenc _hsmi
    mkt_tok oly_anon_id oly_enc_id vero_id rb_clickid s_cid ref_src ref_url spm si""".split()
)


def is_web_url(text: str) -> bool:
    """Whether ``text`` (trimmed) is one http(s) address and nothing else."""
    return bool(_SINGLE_URL.match(text.strip()))


def without_userinfo(text: str) -> str:
    """``text`` without the ``user:password@`` of its authority when it is an address with one (any scheme:
    ``ftp://user:pw@host/`` too); anything else as it is."""
    match = _AUTHORITY.match(text)
    if match is None or "@" not in match.group(2):
        return text
    return match.group(1) + match.group(2).rpartition("@")[2] + text[match.end() :]


def _is_tracking(name: str) -> bool:
    key = name.lower()
    return key in _TRACKING_NAMES or key.startswith(_TRACKING_PREFIXES)


def normalize_url(url: str) -> str:
    """The form two scraps of the same page share. Raises ``ValueError`` for anything but an http(s)
    address with a host."""
    if without_surrogates(url) != url:
        raise ValueError(f"not a web address: {without_surrogates(url)[:200]!r}")
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise ValueError(f"not a web address: {url[:200]!r}")
    host = parts.hostname.lower().rstrip(".")
    try:
        port = parts.port
    except ValueError as exc:  # a port that is not a number
        raise ValueError(f"not a web address: {url[:200]!r}") from exc
    if ":" in host:
        host = f"[{host}]"  # IPv6
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path = quote(unquote(parts.path), safe="/:@!$&'()*+,;=~%-._") or "/"
    if len(path) > 1:
        path = path.rstrip("/") or "/"
    query = [(name, value) for name, value in parse_qsl(parts.query, keep_blank_values=True) if not _is_tracking(name)]
    return urlunsplit((scheme, netloc, path, urlencode(query), ""))
