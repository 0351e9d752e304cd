"""``python -m bench``: run every benchmark and print one table."""

from __future__ import annotations

import sys

from bench import (
    bench_analysis,
    bench_backup,
    bench_cards,
    bench_endpoint,
    bench_import,
    bench_jobs,
    bench_meaning,
    bench_monitor,
    bench_postgres,
    bench_quizzes,
    bench_stars,
    bench_startup,
    bench_til,
)
from bench.common import print_table


def main() -> int:
    rows = (
        bench_jobs.run_all()
        + bench_cards.run_all()
        + bench_analysis.run_all()
        + bench_meaning.run_all()
        + bench_til.run_all()
        + bench_quizzes.run_all()
        + bench_monitor.run_all()
        + bench_stars.run_all()
        + bench_startup.run_all()
        + bench_backup.run_all()
        + bench_import.run_all()
        + bench_endpoint.run_all()
        + bench_postgres.run_all()
    )
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
