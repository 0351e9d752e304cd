#!/usr/bin/env bash
# Build the one-folder bundle and its tar.gz; `make package` runs it once build/package-venv is ready:
#
#   packaging/build.sh PYTHON      PYTHON: a virtual environment's python with packaging/requirements.txt
#
# 1. installs the app from this checkout into that environment with `pip install .` (never editable: the
#    bundle holds what the wheel holds, so a file missing from the wheel shows up as a failing smoke test),
#    without its dependencies and offline: they are packaging/requirements.txt's, pinned with their hashes
#    (`pip check` then says whether that file still holds all the app needs),
# 2. runs PyInstaller on packaging/san-desktop.spec from build/ (outside the checkout's import path),
#    giving dist/san-desktop/,
# 3. packs dist/san-desktop-<version>-linux-<arch>.tar.gz (one folder, san-desktop/, inside).
set -euo pipefail

PY="${1:?usage: packaging/build.sh PYTHON (the python of a venv with packaging/requirements.txt installed)}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$ROOT"
PY="$(cd "$(dirname "$PY")" && pwd -P)/$(basename "$PY")"

VERSION="$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' san_desktop/__init__.py)"
[[ -n "$VERSION" ]] || { echo "build.sh: no __version__ in san_desktop/__init__.py" >&2; exit 1; }
ARCH="$(uname -m)"
TARBALL="dist/san-desktop-$VERSION-linux-$ARCH.tar.gz"

echo "== pip install . (san-desktop $VERSION, non-editable)"
# setuptools builds in the checkout's build/lib, and a file deleted from the tree would stay there and slip
# into the wheel: start that folder afresh
rm -rf build/lib build/bdist.*
"$PY" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation --no-index .
if ! checked="$("$PY" -m pip check --disable-pip-version-check 2>&1)"; then
    echo "$checked" >&2
    echo "build.sh: packaging/requirements.txt lacks what the app needs (above); lock it again with" \
        "python3 packaging/lock_requirements.py" >&2
    exit 1
fi

echo "== PyInstaller (packaging/san-desktop.spec)"
mkdir -p build dist
rm -rf dist/san-desktop "$TARBALL"
(cd build && "$PY" -m PyInstaller --noconfirm --log-level WARN \
    --distpath "$ROOT/dist" --workpath "$ROOT/build/pyinstaller" "$ROOT/packaging/san-desktop.spec")

bundled="$(dist/san-desktop/san --version)"
[[ "$bundled" == "san $VERSION" ]] || { echo "build.sh: the bundle says '$bundled', expected 'san $VERSION'" >&2; exit 1; }

echo "== $TARBALL"
tar --sort=name --owner=0 --group=0 --numeric-owner -C dist -cf - san-desktop | gzip -n >"$TARBALL.part"
mv "$TARBALL.part" "$TARBALL"
echo "Built dist/san-desktop/ ($(du -sh dist/san-desktop | cut -f1)) and $TARBALL ($(du -h "$TARBALL" | cut -f1))"
