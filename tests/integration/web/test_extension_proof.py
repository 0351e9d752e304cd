"""The extension's own core.js (run by node, with its fetch and WebCrypto) against the real endpoint and another
program squatting a lower port of the range (issue 38, item 7): the squatter receives neither the token nor
anything of the page — whether it makes up a proof, asks for the token, or relays the hello to the app — and
the app above it gets the capture; a remembered port taken over by a squatter is proved again and passed over."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from san_desktop.app import SanApp
from san_desktop.web.endpoint import PORTS, BrowserCapture, CaptureEndpoint
from tests.support.squatter import Behaviour, Squatter, squatting

ROOT = Path(__file__).parents[3]
DRIVER = ROOT / "tests" / "browser" / "send_scrap.js"
EXTENSION = ROOT / "browser-extension"
OLD_EXTENSION = ROOT / "tests" / "browser" / "extension-0.1.0"  # its core.js as released, before the proof
TOKEN = "proof-test-token-0123456789abcdef"
PAGE: dict[str, str | None] = {
    "url": "https://notes.example/raft-private",
    "title": "Private notes on Raft",
    "html": "<html><head><title>Private notes on Raft</title></head><body><article><h1>Raft</h1>"
    "<p>A follower that hears from no leader for an election timeout becomes a candidate.</p></article></body></html>",
    "selection": None,
    "kind": "page",
}


def _node() -> str:
    node = shutil.which("node")
    assert node, "Node.js 18 or newer runs the extension's core.js here"
    return node


def _send_with_core(
    scrap: dict[str, Any], remembered: int | None = None, extension: Path = EXTENSION
) -> dict[str, Any]:
    arguments = [_node(), str(DRIVER), str(extension), TOKEN, json.dumps(scrap)]
    done = subprocess.run(
        arguments + ([str(remembered)] if remembered else []), capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture
def app_above(app: SanApp) -> Iterator[Any]:
    """Starts the app's endpoint on a free port of the range above a given one."""
    started: list[CaptureEndpoint] = []

    def capture(sent: BrowserCapture) -> tuple[str, bool]:
        result = app.capture_from_browser(sent).value
        return result.scrap_id, result.duplicate

    def start(squatter: Squatter) -> CaptureEndpoint:
        endpoint = CaptureEndpoint(capture, lambda: TOKEN, ports=range(squatter.port + 1, PORTS.stop))
        endpoint.start()
        started.append(endpoint)
        return endpoint

    yield start
    for endpoint in started:
        endpoint.stop()


def _assert_got_nothing_of_ours(squatter: Squatter) -> None:
    seen = squatter.text()
    assert seen.startswith("GET /v2/hello?nonce="), seen  # it was asked, and only that
    for secret in (TOKEN, "Authorization", "notes.example", "Private notes on Raft", "election timeout", "POST"):
        assert secret not in seen, f"the squatter received {secret!r}"


@pytest.mark.parametrize("behaviour", ["lying", "asking", "relaying"])
def test_a_squatter_on_a_lower_port_gets_no_token_and_no_page_and_the_app_gets_the_capture(
    app: SanApp, app_above: Any, behaviour: Behaviour
) -> None:
    with squatting(behaviour) as squatter:
        endpoint = app_above(squatter)
        squatter.relay_to = endpoint.port
        result = _send_with_core(PAGE)
        assert result["outcome"]["kind"] == "scrapped", result
        assert result["port"] == endpoint.port
        assert squatter.port in [skipped["port"] for skipped in result["skipped"]]
        _assert_got_nothing_of_ours(squatter)
    [scrap] = app.scraps.list_scraps()
    assert scrap.source_ref == PAGE["url"]
    assert "becomes a candidate" in scrap.content


def test_a_remembered_port_taken_over_by_a_squatter_is_proved_again_and_passed_over(
    app: SanApp, app_above: Any
) -> None:
    with squatting("lying") as squatter:
        endpoint = app_above(squatter)
        # the app answered on the squatter's port last time; it has moved since, and something else holds it
        result = _send_with_core(PAGE, remembered=squatter.port)
        assert result["port"] == endpoint.port
        assert result["outcome"]["kind"] == "scrapped", result
        assert result["skipped"][0]["port"] == squatter.port  # asked first, as the remembered one
        _assert_got_nothing_of_ours(squatter)


def test_with_only_a_squatter_nothing_is_sent_and_the_outcome_names_its_port(app: SanApp) -> None:
    with squatting("lying") as squatter:
        result = _send_with_core(PAGE)
        _assert_got_nothing_of_ours(squatter)
    assert result["port"] is None
    assert result["outcome"]["kind"] == "unproven"
    assert squatter.port in [skipped["port"] for skipped in result["outcome"]["skipped"]]
    assert app.scraps.list_scraps() == []


def test_an_extension_from_before_the_proof_is_told_to_update_and_nothing_is_stored(app: SanApp) -> None:
    def capture(sent: BrowserCapture) -> tuple[str, bool]:
        result = app.capture_from_browser(sent).value
        return result.scrap_id, result.duplicate

    endpoint = CaptureEndpoint(capture, lambda: TOKEN)
    port = endpoint.start()
    try:
        result = _send_with_core(PAGE, remembered=port, extension=OLD_EXTENSION)
    finally:
        endpoint.stop()
    # what its badge's tooltip and its options page show: SAN Desktop's sentence
    assert result["port"] == port
    assert result["outcome"]["kind"] == "refused"
    assert result["outcome"]["detail"].startswith("This browser extension is too old for SAN Desktop")
    assert "update it to version 0.2.0 or newer" in result["outcome"]["detail"]
    assert app.scraps.list_scraps() == []
