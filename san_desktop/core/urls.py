"""Links as scraps: recognising a web address and the normalised form that identifies it (issue 16).

Two addresses name the same page when they differ only in the case of the scheme or host, a default
port, a trailing slash, a fragment, or tracking parameters (``utm_*``, ``fbclid``…): they normalise to the
same string, and the scrap is deduplicated by it.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

_SINGLE_URL = re.compile(r"^https?://[^\s<>\"]+$", re.I)
_DEFAULT_PORTS = {"http": 80, "https": 443}
_TRACKING_PREFIXES = ("utm_", "pk_", "mtm_", "hsa_")
_TRACKING_NAMES = frozenset(
    """fbclid gclid gclsrc dclid gbraid wbraid msclkid yclid twclid igshid mc_cid mc_eid _hsenc _hsmi
    mkt_tok oly_anon_id oly_enc_id vero_id rb_clickid s_cid ref_src ref_url spm si""".split()
)


def is_web_url(text: str) -> bool:
    """Whether ``text`` (trimmed) is one http(s) address and nothing else."""
    return bool(_SINGLE_URL.match(text.strip()))


def _is_tracking(name: str) -> bool:
    key = name.lower()
    return key in _TRACKING_NAMES or key.startswith(_TRACKING_PREFIXES)


def normalize_url(url: str) -> str:
    """The form two scraps of the same page share. Raises ``ValueError`` for anything but an http(s)
    address with a host."""
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
    if parts.username:
        netloc = f"{parts.username}@{netloc}"  # kept (a password never is)
    path = quote(unquote(parts.path), safe="/:@!$&'()*+,;=~%-._") or "/"
    if len(path) > 1:
        path = path.rstrip("/") or "/"
    query = [(name, value) for name, value in parse_qsl(parts.query, keep_blank_values=True) if not _is_tracking(name)]
    return urlunsplit((scheme, netloc, path, urlencode(query), ""))
