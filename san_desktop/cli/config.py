"""``san config show`` and ``san config set KEY VALUE`` (the API key is read from standard input)."""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path

from san_desktop.cli.common import print_json
from san_desktop.core.errors import SanError
from san_desktop.core.paths import ensure_data_dir, resolve_data_dir
from san_desktop.core.settings import (
    SHARED_SETTINGS,
    Settings,
    database_url,
    load_settings,
    load_settings_checked,
    save_settings,
    with_value,
)
from san_desktop.db.backends import check_url

# keys that are secrets: kept in the keyring under services.secrets' names (not imported: it loads the keyring)
SECRET_KEYS = {"ai.api_key": ("ai-api-key", "API key"), "database.password": ("database-password", "Database password")}


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    config = commands.add_parser("config", help="settings (AI provider, capture, jobs)")
    sub = config.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    show = sub.add_parser("show", help="all settings")
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=cmd_show)
    set_ = sub.add_parser(
        "set",
        help="change one setting, e.g. `ai.provider openai`; `ai.api_key` and `database.password` read the secret "
        "from standard input",
    )
    set_.add_argument("key", metavar="KEY", help="section.name, e.g. ai.base_url")
    set_.add_argument("value", metavar="VALUE", nargs="?")
    set_.set_defaults(handler=cmd_set)


def cmd_show(args: argparse.Namespace) -> int:
    from san_desktop.services.secrets import AI_API_KEY, DATABASE_PASSWORD, secret_with_source

    directory = resolve_data_dir(args.data_dir)
    settings, problems = load_settings_checked(directory)
    for problem in problems:
        print(f"san: settings.json: {problem}", file=sys.stderr)
    shared = _on_server(directory)
    if shared:
        try:
            settings = _library_settings(args)
        except SanError as exc:  # this machine's own settings are worth showing all the same
            print(f"san: the library's shared settings were not read: {exc}", file=sys.stderr)
            shared = False
    data = settings.as_dict()
    for section, key, name in (("ai", "api_key", AI_API_KEY), ("database", "password", DATABASE_PASSWORD)):
        source = secret_with_source(name)[1]
        data[section][key] = {"keyring": "stored in keyring", "none": "not set"}.get(source, f"from {source}")
    if args.json:
        print_json(data)
        return 0
    for section, values in data.items():
        for key, value in values.items():
            mark = "  (the library's: shared by its machines)" if shared and (section, key) in SHARED_SETTINGS else ""
            print(f"{section}.{key} = {value}{mark}")
    return 0


def _on_server(directory: Path) -> bool:
    try:
        return bool(database_url(directory))
    except ValueError:
        return False  # (said by the commands that open the library)


def _library_settings(args: argparse.Namespace) -> Settings:
    """The settings a window would use: this machine's file with the library's shared values."""
    from san_desktop.cli.common import open_library

    with open_library(args) as app:
        return app.settings


def cmd_set(args: argparse.Namespace) -> int:
    from san_desktop.services.secrets import delete_secret, set_secret

    directory = ensure_data_dir(resolve_data_dir(args.data_dir))
    if args.key in SECRET_KEYS:
        name, what = SECRET_KEYS[args.key]
        if args.value is not None:
            raise SanError(
                f"Secrets are never taken from the command line (it ends up in shell history). Run "
                f"`san config set {args.key}` and type or pipe the key on standard input."
            )
        if sys.stdin is None or sys.stdin.closed:
            raise SanError(f"Standard input is closed: pipe the key in (`... | san config set {args.key}`).")
        secret = getpass.getpass(f"{what}: ") if sys.stdin.isatty() else sys.stdin.readline(4096).strip()
        if not secret:
            deleted = delete_secret(name)
            print(f"{what} removed." if deleted else f"No {what[0].lower() + what[1:]} was stored.")
            return 0
        set_secret(name, secret)
        print(f"{what} stored in the system keyring.")
        return 0
    if args.value is None:
        raise SanError(f"Give a value: san config set {args.key} VALUE")
    section, _, name = args.key.partition(".")
    if (section, name) in SHARED_SETTINGS and _on_server(directory):
        return _set_shared(args, section, name)
    try:
        settings = with_value(load_settings(directory), section, name, args.value)
        if (section, name) == ("database", "url") and settings.database.url:
            check_url(settings.database.url)  # a database a backend opens
    except (ValueError, TypeError) as exc:
        raise SanError(f"Cannot set {args.key}: {exc}") from None
    save_settings(directory, settings)
    print(f"{args.key} = {getattr(getattr(settings, section), name)}")
    return 0


def _set_shared(args: argparse.Namespace, section: str, name: str) -> int:
    """A shared setting of a library on a server: kept by the library, for every machine (and in this
    machine's file too)."""
    from san_desktop.cli.common import open_library

    with open_library(args) as app:
        try:
            settings = with_value(app.settings, section, name, args.value)
        except (ValueError, TypeError) as exc:
            raise SanError(f"Cannot set {args.key}: {exc}") from None
        app.save_settings(settings, overwrite=True)
    print(f"{args.key} = {getattr(getattr(settings, section), name)} (the library's: every machine's)")
    return 0
