"""The browser extension of browser-extension/: its packer makes a Chromium and a Firefox zip whose manifests take
the form each browser runs and name only files the zip holds, it asks for no more than loopback access, every
script parses, and node's own tests (browser-extension/tests/: the helpers, and background.js run against a
stand-in for the extension API) pass against a local HTTP server.

Node.js is needed (18 or newer, for ``node --test``): no browser is, so a real-browser load is not checked here."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "browser-extension"
PERMISSIONS_ALLOWED = {"activeTab", "scripting", "contextMenus", "storage"}


def _node() -> str:
    node = shutil.which("node")
    assert node, "Node.js 18 or newer is needed to check the browser extension's scripts (node --check, node --test)"
    return node


@pytest.fixture(scope="module")
def packed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("extension")
    done = subprocess.run(
        [sys.executable, str(EXTENSION / "pack.py"), "--out", str(out)], capture_output=True, text=True, check=True
    )
    zips = {family: out / f"san-desktop-extension-{family}.zip" for family in ("chromium", "firefox")}
    assert done.stdout.split() == [str(path) for path in zips.values()]
    return zips


def _manifest(zip_path: Path) -> dict[str, Any]:
    with zipfile.ZipFile(zip_path) as zip_file:
        manifest: dict[str, Any] = json.loads(zip_file.read("manifest.json"))
    return manifest


def _referenced_files(manifest: dict[str, Any], zip_file: zipfile.ZipFile) -> set[str]:
    """Every file the manifest names, and the scripts its options page loads."""
    names = set(manifest["icons"].values()) | set(manifest["action"]["default_icon"].values())
    background = manifest["background"]
    names |= set(background.get("scripts", [])) | (
        {background["service_worker"]} if "service_worker" in background else set()
    )
    options_page = manifest["options_ui"]["page"]
    names.add(options_page)
    names |= set(re.findall(r'<script src="([^"]+)"', zip_file.read(options_page).decode()))
    return names


@pytest.mark.parametrize("family", ["chromium", "firefox"])
def test_each_zip_holds_a_manifest_v3_at_its_root_and_every_file_it_names(packed: dict[str, Path], family: str) -> None:
    with zipfile.ZipFile(packed[family]) as zip_file:
        names = set(zip_file.namelist())
        manifest = _manifest(packed[family])
        assert manifest["manifest_version"] == 3
        assert "manifest.json" in names
        missing = _referenced_files(manifest, zip_file) - names
        assert not missing, f"{family} zip lacks {missing}"
        # the packer and node's tests stay out of what is installed
        assert not {name for name in names if name == "pack.py" or name.startswith("tests/")}


@pytest.mark.parametrize("family", ["chromium", "firefox"])
def test_the_extension_may_reach_only_loopback_and_asks_for_few_permissions(
    packed: dict[str, Path], family: str
) -> None:
    manifest = _manifest(packed[family])
    assert manifest["host_permissions"] == ["http://127.0.0.1/*"]
    assert set(manifest["permissions"]) <= PERMISSIONS_ALLOWED
    assert "content_scripts" not in manifest  # pages are read only when the reader asks, through activeTab
    assert manifest["commands"]["_execute_action"]["suggested_key"]["default"] == "Alt+Shift+S"


def test_each_browser_gets_the_background_form_it_runs(packed: dict[str, Path]) -> None:
    chromium, firefox = _manifest(packed["chromium"]), _manifest(packed["firefox"])
    # Chromium: a service worker that loads core.js itself; no Gecko key for it to warn about
    assert chromium["background"] == {"service_worker": "background.js"}
    assert "browser_specific_settings" not in chromium
    # Firefox has no extension service workers: an event page with core.js loaded first
    assert firefox["background"] == {"scripts": ["core.js", "background.js"]}
    assert firefox["browser_specific_settings"]["gecko"]["id"] == "scrap@san-desktop.local"
    # the unpacked folder carries both forms, so either browser loads it as it is
    source = json.loads((EXTENSION / "manifest.json").read_text())
    assert source["background"] == {**chromium["background"], **firefox["background"]}


def test_packing_twice_gives_the_same_bytes(packed: dict[str, Path], tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(EXTENSION / "pack.py"), "--out", str(tmp_path)], capture_output=True, check=True
    )
    for path in packed.values():
        assert (tmp_path / path.name).read_bytes() == path.read_bytes()


def test_every_script_parses() -> None:
    scripts = sorted(EXTENSION.rglob("*.js"))
    assert {path.name for path in scripts} >= {
        "background.js",
        "core.js",
        "options.js",
        "core.test.js",
        "background.test.js",
    }
    for script in scripts:
        done = subprocess.run([_node(), "--check", str(script)], capture_output=True, text=True)
        assert done.returncode == 0, f"{script.name}: {done.stderr}"


def test_the_helpers_pass_their_node_tests() -> None:
    done = subprocess.run(
        [_node(), "--test", "--test-timeout=30000", str(EXTENSION / "tests")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^# pass [1-9]\d*$", done.stdout, re.MULTILINE)
    assert re.search(r"^# fail 0$", done.stdout, re.MULTILINE)
