"""Packs the browser extension into one zip per browser family, files at the zip root (what the stores and
Firefox's "Load Temporary Add-on" expect). Standard library only, so it runs without the app's virtualenv:

    python3 browser-extension/pack.py [--out DIR]      # default: dist/ at the repository root

The folder's manifest.json names both background forms so the unpacked folder loads in either browser. Each zip
carries only its own: Chromium runs ``background.service_worker`` (and warns about ``scripts``), Firefox runs
``background.scripts`` (it has no extension service workers). The Chromium zip also drops the Gecko settings,
which Chromium would flag as an unknown key.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# a fixed date makes two packs of the same files byte-identical
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
# what lives beside the extension but is not part of it
LEFT_OUT = {"pack.py", "tests", "__pycache__"}


def extension_files(source: Path) -> list[Path]:
    """The files to ship, relative to ``source``, manifest.json aside (each zip writes its own)."""
    files = []
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if not path.is_file() or relative.parts[0] in LEFT_OUT or relative.name.startswith("."):
            continue
        if relative != Path("manifest.json"):
            files.append(relative)
    return files


def chromium_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    variant = copy.deepcopy(manifest)
    variant["background"] = {"service_worker": manifest["background"]["service_worker"]}
    variant.pop("browser_specific_settings", None)
    return variant


def firefox_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    variant = copy.deepcopy(manifest)
    variant["background"] = {"scripts": manifest["background"]["scripts"]}
    return variant


def _write(zip_file: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    zip_file.writestr(info, data)


def pack(source: Path, out: Path) -> list[Path]:
    """Writes both zips into ``out`` and returns their paths."""
    manifest = json.loads((source / "manifest.json").read_text(encoding="utf-8"))
    files = extension_files(source)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for family, variant in (("chromium", chromium_manifest(manifest)), ("firefox", firefox_manifest(manifest))):
        target = out / f"san-desktop-extension-{family}.zip"
        with zipfile.ZipFile(target, "w") as zip_file:
            _write(zip_file, "manifest.json", (json.dumps(variant, indent=2, ensure_ascii=False) + "\n").encode())
            for relative in files:
                _write(zip_file, relative.as_posix(), (source / relative).read_bytes())
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=HERE.parent / "dist", help="folder for the zips")
    args = parser.parse_args(argv)
    for path in pack(HERE, args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
