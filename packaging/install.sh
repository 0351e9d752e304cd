#!/usr/bin/env bash
# Install SAN Desktop for the current user, without root, from the unpacked bundle this script sits in:
#
#   ./install.sh              install (or replace an earlier install)
#   ./install.sh --uninstall  remove what install.sh installed (uninstall.sh does the same)
#
# Where things go (every path can be moved for a test: PREFIX=/tmp/p XDG_DATA_HOME=/tmp/d ./install.sh):
#   $PREFIX/lib/san-desktop/                           the app (this folder, copied); PREFIX=~/.local by default
#   $PREFIX/bin/san, $PREFIX/bin/san-desktop           links to the two executables in it
#   $XDG_DATA_HOME/applications/san-desktop.desktop    the menu entry (XDG_DATA_HOME=$PREFIX/share by default)
#   $XDG_DATA_HOME/icons/hicolor/<N>x<N>/apps/san-desktop.png, .../scalable/apps/san-desktop.svg
# Every file, link and folder made is listed in $PREFIX/lib/san-desktop/installed-files.txt; the uninstall
# removes exactly those and never your SAN Desktop data (scraps, cards, settings: $XDG_DATA_HOME/san-desktop
# or $SAN_DATA_DIR), which is a different folder from the app's.
set -euo pipefail

APP=san-desktop
EXECUTABLES=(san-desktop san)
MANIFEST_NAME=installed-files.txt

say() { printf '%s\n' "$*"; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

usage() {
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
}

main() {
    local mode=install
    while (($#)); do
        case "$1" in
            --uninstall) mode=uninstall ;;
            -h | --help) usage; exit 0 ;;
            *) die "unknown argument: $1 (try --help)" ;;
        esac
        shift
    done

    HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
    [[ -n "${HOME:-}" ]] || die "HOME is not set"
    PREFIX="${PREFIX:-$HOME/.local}"
    DATA_HOME="${XDG_DATA_HOME:-$PREFIX/share}"
    LIB_DIR="$PREFIX/lib/$APP"
    BIN_DIR="$PREFIX/bin"
    for path in "$PREFIX" "$DATA_HOME"; do
        [[ "$path" == /* ]] || die "PREFIX and XDG_DATA_HOME must be absolute paths (got '$path')"
    done

    if [[ "$mode" == uninstall ]]; then
        # Run from an installed copy, uninstall that copy (whatever PREFIX says now).
        if [[ -f "$HERE/$MANIFEST_NAME" ]]; then
            LIB_DIR="$HERE"
        fi
        uninstall "$LIB_DIR"
    else
        install
    fi
}

# --- install -------------------------------------------------------------------------------------------

MANIFEST_LINES=()
MANIFEST_FILE=""

# Remember what was made. Once the app folder is in place every line goes straight to its manifest, so an
# install that stops half-way can still be undone with --uninstall.
record() {
    MANIFEST_LINES+=("$1")
    if [[ -n "$MANIFEST_FILE" ]]; then
        printf '%s\n' "$1" >>"$MANIFEST_FILE"
    fi
}

# mkdir -p that records the folders it made (outermost first), so the uninstall can remove them again
make_dir() {
    local dir="$1" missing=()
    while [[ ! -d "$dir" ]]; do
        missing=("$dir" "${missing[@]}")
        dir="$(dirname "$dir")"
    done
    local made
    for made in "${missing[@]}"; do
        mkdir "$made"
        record "dir $made"
    done
}

install() {
    [[ -x "$HERE/san-desktop" && -x "$HERE/san" && -d "$HERE/_internal" ]] ||
        die "run me from the unpacked SAN Desktop bundle (the folder with san-desktop, san and _internal/)"
    [[ -f "$HERE/$MANIFEST_NAME" ]] &&
        die "$HERE is an installed copy; run install.sh from the unpacked download instead"
    local desktop_src="$HERE/_internal/san_desktop/resources/$APP.desktop"
    local icons_src="$HERE/_internal/share/icons/hicolor"
    [[ -f "$desktop_src" && -d "$icons_src" ]] || die "the bundle is incomplete: $desktop_src or $icons_src is missing"
    case "$LIB_DIR$BIN_DIR$DATA_HOME" in
        *$'\n'*) die "install paths may not contain line breaks" ;;
    esac
    # The data folder of the app is $DATA_HOME/san-desktop: the app itself must never go there.
    [[ "$LIB_DIR" != "$DATA_HOME/$APP" ]] || die "$LIB_DIR is where SAN Desktop keeps your data; choose another PREFIX"

    if [[ -e "$LIB_DIR" ]]; then
        [[ -f "$LIB_DIR/$MANIFEST_NAME" ]] ||
            die "$LIB_DIR exists but was not made by install.sh; move it away first"
        say "Replacing the SAN Desktop installed in $LIB_DIR"
        uninstall "$LIB_DIR" quiet
    fi

    local name target
    for name in "${EXECUTABLES[@]}"; do
        target="$BIN_DIR/$name"
        if [[ -e "$target" || -L "$target" ]]; then
            die "$target already exists and is not from install.sh; remove or rename it, then run install.sh again"
        fi
    done

    say "Installing SAN Desktop into $LIB_DIR"
    make_dir "$(dirname "$LIB_DIR")"
    STAGING="$LIB_DIR.installing.$$"  # copied beside, then renamed: no half-copied app folder
    rm -rf "$STAGING"
    trap 'rm -rf "$STAGING"' EXIT
    cp -a "$HERE/." "$STAGING/"
    mv "$STAGING" "$LIB_DIR"
    trap - EXIT
    record "tree $LIB_DIR"
    record "share $DATA_HOME"
    MANIFEST_FILE="$LIB_DIR/$MANIFEST_NAME"
    printf '%s\n' "${MANIFEST_LINES[@]}" >"$MANIFEST_FILE"
    trap 'say "install.sh: stopped half-way; \"$LIB_DIR/uninstall.sh\" removes what was installed" >&2' EXIT

    make_dir "$BIN_DIR"
    for name in "${EXECUTABLES[@]}"; do
        ln -s "$LIB_DIR/$name" "$BIN_DIR/$name"
        record "link $BIN_DIR/$name"
    done

    # The menu entry: the one .desktop file of the app, with Exec pointing at the installed executable (the
    # desktop's PATH may lack ~/.local/bin). Exec quotes it; the characters that would need escaping inside
    # the quotes are refused instead.
    local exec_path="$LIB_DIR/san-desktop"
    case "$exec_path" in
        *[\"\`\$\\]*) die "the install path may not contain \", \`, \$ or \\ ($exec_path)" ;;
    esac
    local apps="$DATA_HOME/applications"
    make_dir "$apps"
    sed -e "s|^Exec=.*|Exec=\"$exec_path\"|" -e "s|^TryExec=.*|TryExec=$exec_path|" \
        "$desktop_src" >"$apps/$APP.desktop"
    record "file $apps/$APP.desktop"
    if command -v desktop-file-validate >/dev/null 2>&1; then
        desktop-file-validate "$apps/$APP.desktop" || die "the installed $apps/$APP.desktop does not validate"
    fi

    local icon size_dir
    for icon in "$icons_src"/*/apps/"$APP".*; do
        size_dir="$(basename "$(dirname "$(dirname "$icon")")")"
        make_dir "$DATA_HOME/icons/hicolor/$size_dir/apps"
        cp "$icon" "$DATA_HOME/icons/hicolor/$size_dir/apps/"
        record "file $DATA_HOME/icons/hicolor/$size_dir/apps/$(basename "$icon")"
    done

    trap - EXIT
    refresh_caches "$DATA_HOME"

    say "Installed:"
    say "  $BIN_DIR/san-desktop   the app (also in your applications menu as SAN Desktop)"
    say "  $BIN_DIR/san           the command line"
    case ":$PATH:" in
        *":$BIN_DIR:"*) ;;
        *) say "Note: $BIN_DIR is not on your PATH; add it to run san and san-desktop by name." ;;
    esac
    say "Uninstall with: $LIB_DIR/uninstall.sh"
}

# The desktop's caches, where the tools exist and the caches do already. A user's folders usually have
# none (desktops then read the folders themselves); one made here would not be install.sh's to remove, and
# would go stale when other programs add entries or icons without refreshing it.
refresh_caches() {
    local share="$1"
    if command -v update-desktop-database >/dev/null 2>&1 && [[ -f "$share/applications/mimeinfo.cache" ]]; then
        update-desktop-database -q "$share/applications" || say "update-desktop-database failed (harmless)"
    fi
    if command -v gtk-update-icon-cache >/dev/null 2>&1 && [[ -f "$share/icons/hicolor/icon-theme.cache" ]]; then
        gtk-update-icon-cache -q -t -f "$share/icons/hicolor" || say "gtk-update-icon-cache failed (harmless)"
    fi
}

# --- uninstall -----------------------------------------------------------------------------------------

uninstall() {
    local lib_dir="$1" quiet="${2:-}"
    local manifest="$lib_dir/$MANIFEST_NAME"
    if [[ ! -f "$manifest" ]]; then
        if [[ -e "$lib_dir" ]]; then
            die "$lib_dir has no $MANIFEST_NAME: it was not installed by install.sh, so it is left alone"
        fi
        say "SAN Desktop is not installed in $lib_dir; nothing to remove."
        return 0
    fi
    local line kind path dirs=() tree="" share=""
    while IFS= read -r line; do
        kind="${line%% *}"
        path="${line#* }"
        case "$kind" in
            link)
                # only a link that still points into the installed app
                if [[ -L "$path" && "$(readlink "$path")" == "$lib_dir/"* ]]; then
                    rm -f "$path"
                elif [[ -e "$path" || -L "$path" ]]; then
                    say "Left alone (changed since the install): $path"
                fi
                ;;
            file) rm -f "$path" ;;
            dir) dirs=("$path" "${dirs[@]}") ;;  # innermost first
            tree) tree="$path" ;;
            share) share="$path" ;;
            *) say "Skipped an unknown line of $manifest: $line" ;;
        esac
    done <"$manifest"
    [[ "$tree" == "$lib_dir" ]] || die "$manifest does not describe $lib_dir; nothing more is removed"
    rm -rf "$lib_dir"
    for path in "${dirs[@]}"; do
        rmdir "$path" 2>/dev/null || true  # only if empty: something else may have moved in since
    done
    if [[ -n "$share" ]]; then
        refresh_caches "$share"
    fi
    if [[ -z "$quiet" ]]; then
        say "SAN Desktop removed from $lib_dir (its links, menu entry and icons too)."
        say "Your data was not touched: scraps, cards, settings and logs stay in ${XDG_DATA_HOME:-$HOME/.local/share}/san-desktop"
        say "(or the folder you gave with SAN_DATA_DIR or --data-dir). Delete it yourself if you want it gone."
    fi
}

main "$@"
exit
