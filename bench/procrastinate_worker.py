"""A procrastinate worker process with a no-op task, the anchor of the drain benchmark on PostgreSQL:

    python -m bench.procrastinate_worker CONNINFO CONCURRENCY

Prints "ready" once its worker listens to the server's notifications (as ``bench.pg_worker`` does), then
drains what is deferred until it is terminated (SIGTERM: procrastinate's own graceful stop)."""

from __future__ import annotations

import logging
import sys
from typing import Any

from procrastinate import App, PsycopgConnector, SyncPsycopgConnector
from procrastinate.schema import SchemaManager

TASK = "no_op"


class _SaysReady(PsycopgConnector):  # type: ignore[misc]
    """Says "ready" the first time its listening connection waits for notifications (its LISTEN is done)."""

    _said = False

    async def _loop_notify(self, *args: Any, **kwargs: Any) -> None:
        if not _SaysReady._said:
            _SaysReady._said = True
            print("ready", flush=True)
        await super()._loop_notify(*args, **kwargs)


def worker_app(conninfo: str) -> App:
    app = App(connector=_SaysReady(conninfo=conninfo))

    @app.task(name=TASK)  # type: ignore[untyped-decorator]
    def no_op() -> None:
        """A plain function, as SAN's processors are (procrastinate runs it on a thread)."""
        return None

    return app


def apply_schema(conninfo: str) -> None:
    """procrastinate's tables, functions and triggers in the (empty) database ``conninfo`` names."""
    import psycopg

    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(SchemaManager.get_schema())


def defer(conninfo: str, count: int) -> None:
    """``count`` no-op jobs in one call (one transaction), as the drain of SAN's jobs inserts its own."""
    app = App(connector=SyncPsycopgConnector(conninfo=conninfo))
    with app.open():
        app.configure_task(name=TASK).batch_defer(*({} for _ in range(count)))


def main(argv: list[str]) -> int:
    logging.getLogger("procrastinate").setLevel(logging.ERROR)
    app = worker_app(argv[1])
    app.run_worker(concurrency=int(argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
