"""``san``: a command line over the same services as the GUI.

Exit codes: 0 success, 1 an expected error (message on stderr), 2 usage error, 3 another instance holds
the data directory, 4 database problem, 5 no such job (or other item), 124 ``--timeout`` ended a run
that still had work.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from san_desktop import APP_NAME, __version__
from san_desktop.cli import config, doctor, jobs, scraps
from san_desktop.core.errors import SanError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="san", description=f"{APP_NAME} command line")
    parser.add_argument("--version", action="version", version=f"san {__version__}")
    parser.add_argument("--data-dir", metavar="DIR", help="data directory (default: $SAN_DATA_DIR or the platform's)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    doctor.add_parser(commands)
    scraps.add_parsers(commands)
    config.add_parser(commands)
    jobs.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except SanError as exc:
        print(f"san: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `san ... | head`: the reader has gone, which is fine
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
