"""The app's proof that it holds the capture token (``web.proof``): the message the extension checks, and the
nonces it takes."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from san_desktop.web.proof import server_proof, valid_nonce


def test_the_proof_is_an_hmac_of_the_token_over_this_port_and_nonce() -> None:
    nonce = "a" * 22
    expected = hmac.new(b"tok", b"san-server\n127.0.0.1:41790\n" + nonce.encode(), hashlib.sha256).digest()
    proof = server_proof("tok", 41790, nonce)
    assert proof == base64.urlsafe_b64encode(expected).rstrip(b"=").decode()
    # the vector browser-extension/tests/core.test.js checks its WebCrypto against
    assert proof == "9j0XQYfQ1ru7-wsQWiHv5F2cruHKUUseSszJV-OdVuM"
    assert len({proof, server_proof("tok", 41791, nonce), server_proof("tok", 41790, "b" * 22)}) == 3
    assert server_proof("another", 41790, nonce) != proof


@pytest.mark.parametrize(
    ("nonce", "taken"),
    [
        ("a" * 22, True),
        ("Ab0_-" * 8 + "xyz", True),
        ("a" * 128, True),
        ("a" * 21, False),
        ("a" * 129, False),
        ("a" * 30 + "=", False),
        ("a" * 30 + "/", False),
        ("a" * 30 + "\n", False),
        ("", False),
    ],
)
def test_a_nonce_is_22_to_128_base64url_characters(nonce: str, taken: bool) -> None:
    assert valid_nonce(nonce) is taken
