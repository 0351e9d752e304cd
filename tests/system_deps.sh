#!/usr/bin/env bash
# What the test suite drives besides Python, installed where missing (`make test` runs this first): from
# Debian, an X server and xclip for `san scrap add --clipboard` on a real clipboard, Qt's xcb libraries, and
# chromium with node for the browser extension's live test; from npm, the locked playwright-core that drives
# chromium (tests/browser). As root or with sudo it installs them; otherwise it says what to install and fails.
set -euo pipefail
packages=(xvfb xauth xclip libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0
    libxcb-xinerama0 libxcb-xkb1 libxkbcommon-x11-0 libxcb-shape0 chromium)
browser_tests="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/browser"
node_modules() {
    [[ -d "$browser_tests/node_modules/playwright-core" ]] || npm ci --prefix "$browser_tests" --silent --no-audit --no-fund
}
command -v dpkg >/dev/null || { echo "tests/system_deps.sh: not a Debian-like system; install Xvfb and xclip yourself" >&2; exit 0; }
missing=()
for package in "${packages[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
command -v npm >/dev/null || missing+=(nodejs npm)  # (a node of another origin, with its npm, does too)
if ((${#missing[@]} == 0)); then
    node_modules
    exit 0
fi
if ((EUID == 0)); then
    sudo=()
elif sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
else
    echo "The tests need: ${missing[*]}. Install them with: sudo apt-get install ${missing[*]}" >&2
    exit 1
fi
echo "Installing what the tests need: ${missing[*]}"
"${sudo[@]}" apt-get update -q
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
node_modules
