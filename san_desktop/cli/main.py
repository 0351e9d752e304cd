"""``san``: a command line over the same services as the GUI.

Exit codes: 0 success, 1 an expected error (message on stderr), 2 usage error, 3 another instance holds
the data directory, 4 database problem, 5 no such job (or other item), 69 ``jobs run`` gave up on a library's
server that stayed out of reach, 75 ``jobs run --until-idle`` stopped while failures or a rejected key paused the
AI pool (its jobs still wait), 124 ``--timeout`` ended a run that still had work.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from san_desktop import APP_NAME, __version__
from san_desktop.cli.common import TerminalSafeStream
from san_desktop.core.errors import SanError
from san_desktop.core.redact import redact


def build_parser() -> argparse.ArgumentParser:
    # the commands' modules (SQLAlchemy, the facade...) load here, not when `san` starts: --version stays quick
    from san_desktop.cli import (
        cards,
        config,
        db,
        doctor,
        export,
        github,
        imports,
        jobs,
        quiz,
        scraps,
        stars,
        til,
        trash,
    )

    parser = argparse.ArgumentParser(prog="san", description=f"{APP_NAME} command line")
    parser.add_argument("--version", action="version", version=f"san {__version__}")
    parser.add_argument("--data-dir", metavar="DIR", help="data directory (default: $SAN_DATA_DIR or the platform's)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    doctor.add_parser(commands)
    scraps.add_parsers(commands)
    cards.add_parser(commands)
    cards.add_search_parser(commands)
    config.add_parser(commands)
    jobs.add_parser(commands)
    til.add_parser(commands)
    quiz.add_parser(commands)
    stars.add_parser(commands)
    github.add_parser(commands)
    imports.add_parser(commands)
    trash.add_parser(commands)
    export.add_parser(commands)
    db.add_parser(commands)
    return parser


def _join_option_values(argv: Sequence[str], parser: argparse.ArgumentParser) -> list[str]:
    """``--text -starts-with-a-dash`` as ``--text=-starts-with-a-dash``: argparse would take the value
    for an option and refuse it. ``--text -- VALUE`` (or ``--text=-- VALUE``), the usual way to say "what
    follows is not an option", takes VALUE; argparse would drop the ``--`` and hand on an empty list."""
    joined: list[str] = []
    items = iter(argv)
    for item in items:
        option = next((name for name in TEXT_OPTIONS if item in (name, f"{name}=--")), None)
        if option is None:
            joined.append(item)
            continue
        value = next(items, None) if item == option else "--"
        if value == "--":
            value = next(items, None)
            if value is None:
                parser.error(f"argument {option}: expected the text after -- (e.g. {option} -- -v)")
        joined.append(item if value is None else f"{option}={value}")
    return joined


TEXT_OPTIONS = ("--text", "--search", "--title", "--summary", "--tags", "--category")


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments == ["--version"]:
        print(f"san {__version__}")
        return 0
    parser = build_parser()
    args = parser.parse_args(_join_option_values(arguments, parser))
    handler: Callable[[argparse.Namespace], int] = args.handler
    real_out, real_err = sys.stdout, sys.stderr
    if real_out is not None:
        sys.stdout = TerminalSafeStream(real_out)
    if real_err is not None:
        sys.stderr = TerminalSafeStream(real_err)
    try:
        return handler(args)
    except SanError as exc:
        print(f"san: {redact(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `san ... | head`: the reader has gone, which is fine
        real_err.close()
        return 0
    finally:
        sys.stdout, sys.stderr = real_out, real_err


if __name__ == "__main__":
    sys.exit(main())
