#!/usr/bin/env bash
# Remove SAN Desktop as install.sh installed it: the app folder, the links in ~/.local/bin, the menu entry
# and the icons (exactly the files listed in the installed copy's installed-files.txt). Your SAN Desktop
# data (scraps, cards, settings, logs) is never removed. Same as `install.sh --uninstall`; honours the same
# PREFIX and XDG_DATA_HOME when run from the unpacked download rather than from the installed copy.
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/install.sh" --uninstall "$@"
