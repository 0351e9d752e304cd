"""``python -m bench [NAME ...]``: run benchmarks and print one table (every group when no name is given).

A NAME is a group (a module's benchmarks: ``jobs`` runs ``bench/bench_jobs.py``), a selection (``seam``: the
rows of issue 39's targets), or one benchmark function of a group (``postgres:bench_notifications``).
``python -m bench --list`` prints them. A benchmark that fails is said on stderr with its traceback; the
others still run and the table holds their rows (the exit status is then 1)."""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from collections.abc import Callable

from bench.common import Row, print_table

# in the order of a full run; each is bench/bench_<name>.py's run_all
GROUPS = (
    "jobs",
    "cards",
    "analysis",
    "meaning",
    "til",
    "quizzes",
    "monitor",
    "stars",
    "startup",
    "backup",
    "import",
    "endpoint",
    "postgres",
)

SELECTIONS: dict[str, tuple[str, ...]] = {
    # issue 39's targets, each beside its anchor: the drains against huey and procrastinate, scraps to cards
    # against the provider alone, notifications per completed job, the window's lag under 1,000 quick jobs
    # and a bulk retry of 10k, `san scrap add` against `python -c pass`
    "seam": (
        "jobs:bench_drain_against_huey",
        "postgres:bench_drain_against_procrastinate",
        "jobs:bench_end_to_end",
        "postgres:bench_notifications",
        "jobs:bench_gui_lag",
        "monitor:run_bulk_retry",
        "startup:bench_commands",
    ),
}


class UnknownBenchmarkError(ValueError):
    pass


def expand(names: list[str]) -> list[str]:
    """The ``group:function`` entries ``names`` stand for, in order, each once; every group's run_all when
    ``names`` is empty."""
    entries: list[str] = []
    for name in names or list(GROUPS):
        if name in SELECTIONS:
            found = list(SELECTIONS[name])
        elif name in GROUPS:
            found = [f"{name}:run_all"]
        elif name.partition(":")[0] in GROUPS and name.partition(":")[2]:
            found = [name]
        else:
            raise UnknownBenchmarkError(
                f"No benchmark is called {name!r}: name a group ({', '.join(GROUPS)}), a selection "
                f"({', '.join(SELECTIONS)}) or a group's function (group:function)."
            )
        entries += [entry for entry in found if entry not in entries]
    return entries


def resolve(entry: str) -> Callable[[], list[Row]]:
    """The function ``group:function`` names (its module imported)."""
    group, _, function = entry.partition(":")
    module = importlib.import_module(f"bench.bench_{group}")
    found = getattr(module, function, None)
    if not callable(found):
        raise UnknownBenchmarkError(f"bench/bench_{group}.py has no benchmark function {function!r}.")
    return found  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help="a group, a selection or group:function")
    parser.add_argument("--list", action="store_true", help="print the groups and selections, run nothing")
    args = parser.parse_args(argv)
    if args.list:
        print("groups:", " ".join(GROUPS))
        for name, entries in SELECTIONS.items():
            print(f"{name}:", " ".join(entries))
        return 0
    try:
        calls = [(entry, resolve(entry)) for entry in expand(args.names)]
    except UnknownBenchmarkError as exc:
        parser.error(str(exc))
    rows: list[Row] = []
    failed: list[str] = []
    for entry, call in calls:
        try:
            rows += call()
        except Exception:  # one broken benchmark must not lose the figures of an hour's run
            failed.append(entry)
            print(f"benchmark {entry} failed:", file=sys.stderr)
            traceback.print_exc()
    print_table(rows)
    if failed:
        print(f"failed: {', '.join(failed)} (tracebacks on stderr)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
