"""How the app proves to the browser extension that it holds the capture token, before the extension sends
the token or anything of a page (issue 38: any program that binds a port of the range first would otherwise
receive both).

The extension makes a fresh random nonce and asks ``GET /v2/hello?nonce=N`` without the token; the app
answers ``HMAC-SHA256(token, "san-server\\n127.0.0.1:<its port>\\n" + N)`` (base64url, unpadded). The
extension computes the same with WebCrypto and sends the token only to a port whose answer matches. The
token never travels before the proof; the nonce makes an old answer useless; the port in the message makes a
relayed one useless: a program on 41730 that passes the nonce on to the app on 41735 gets a proof for 41735,
which the extension, talking to 41730, refuses. ``browser-extension/core.js`` computes the same message.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re

PROTOCOL = 2  # 1: the token sent with the first probe to every port (extension 0.1.x, refused now)
EXTENSION_VERSION = "0.2.0"  # the first extension that asks for the proof (its manifest's version)
_NONCE = re.compile(r"[A-Za-z0-9_-]{22,128}")  # base64url, 128 bits at least


def valid_nonce(nonce: str) -> bool:
    return _NONCE.fullmatch(nonce) is not None


def server_proof(token: str, port: int, nonce: str) -> str:
    """What the app on ``port`` answers to ``nonce``."""
    message = f"san-server\n127.0.0.1:{port}\n{nonce}".encode()
    digest = hmac.new(token.encode("utf-8"), message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
