"""``san github token set`` (from standard input, into the keyring) and ``san github test``."""

from __future__ import annotations

import argparse
import getpass
import sys

from san_desktop.core.errors import SanError


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    github = commands.add_parser("github", help="the GitHub account TILs are committed with")
    sub = github.add_subparsers(dest="github_command", metavar="ACTION", required=True)
    token = sub.add_parser("token", help="the token (kept in the system keyring)")
    token_sub = token.add_subparsers(dest="token_command", metavar="ACTION", required=True)
    token_set = token_sub.add_parser(
        "set", help="read a token (fine-grained with Contents read/write, or classic `repo`) from standard input"
    )
    token_set.set_defaults(handler=cmd_token_set)
    test = sub.add_parser("test", help="check the token and the push permission on the repository")
    test.set_defaults(handler=cmd_test)


def cmd_token_set(args: argparse.Namespace) -> int:
    from san_desktop.services.secrets import GITHUB_TOKEN, delete_secret, set_secret

    if sys.stdin is None or sys.stdin.closed:
        raise SanError("Standard input is closed: pipe the token in (`... | san github token set`).")
    token = getpass.getpass("GitHub token: ") if sys.stdin.isatty() else sys.stdin.readline(4096).strip()
    if not token:
        print("GitHub token removed." if delete_secret(GITHUB_TOKEN) else "No GitHub token was stored.")
        return 0
    set_secret(GITHUB_TOKEN, token)
    print("GitHub token stored in the system keyring.")
    return 0


def cmd_test(args: argparse.Namespace) -> int:
    from san_desktop.cli.common import open_library

    with open_library(args) as app:
        result = app.connections.test_github(app.settings.github)
        source = app.connections.github_token_source()
    print(f"OK: {result} (token from {source})")
    return 0
