"""The browser extension's endpoint under a burst: 200 pages sent at once (8 connections, from another
process) to the open window, each page's article taken from the HTML sent; how long until all are answered,
and the window's worst event-loop lag meanwhile (the cards that follow are made by the runner too)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from bench.common import LagMeter, Row, open_window, temporary_data_dir, wait_until

PAGES = 200
CONNECTIONS = 8
PAGE = """<!DOCTYPE html><html><head><title>Page {n}</title></head><body><nav>Home | Blog</nav><article>
<h1>Write-ahead logging, part {n}</h1><p>A checkpoint copies the pages of the write-ahead log back into the
database file, so that the log can be reset; readers that stay open can keep it from finishing ({n}).</p>
<p>Each reader sees the database as of the moment its transaction started, whatever writers do meanwhile.</p>
</article><footer>© the blog</footer></body></html>"""


# The pages come from another process, as from a browser: senders in the window's own process would
# compete with it for the GIL, which no browser does.
SENDER = """
import json, sys, threading
import httpx
port, token, pages, connections, page = json.loads(sys.stdin.read())
answers = []
lock = threading.Lock()

def send(numbers):
    with httpx.Client(timeout=60) as client:
        for n in numbers:
            response = client.post(
                f"http://127.0.0.1:{port}/v1/scraps",
                json={"url": f"https://blog.example/{n}", "html": page.format(n=n), "kind": "page"},
                headers={"Authorization": f"Bearer {token}", "Origin": "chrome-extension://bench"},
            )
            with lock:
                answers.append(response.status_code)

senders = [threading.Thread(target=send, args=(range(start, pages, connections),)) for start in range(connections)]
for sender in senders:
    sender.start()
for sender in senders:
    sender.join()
print(json.dumps(answers))
"""


def bench_burst(directory: Path) -> list[Row]:
    with open_window(directory) as (app, window):
        app.warm_up_encoder()  # (as after the app's own start-up warm-up: the burst, not the model's loading)
        wait_until(lambda: False, 1000)
        port, token = window.browser_endpoint.port, window.browser_endpoint.token()
        lag = LagMeter()
        lag.start()
        began = time.perf_counter()
        sender = subprocess.Popen(
            [sys.executable, "-c", SENDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert sender.stdin is not None
        assert sender.stdout is not None
        sender.stdin.write(json.dumps([port, token, PAGES, CONNECTIONS, PAGE]))
        sender.stdin.close()
        wait_until(lambda: sender.poll() is not None, 600_000)
        elapsed = time.perf_counter() - began
        answers: list[int] = json.loads(sender.stdout.read() or "[]")
        wait_until(lambda: False, 1000)  # the hub's last ticks reach the pages
        lag.stop()
    ok = answers.count(200)
    return [
        Row(f"browser endpoint: {PAGES} pages sent in a burst", elapsed, "s", f"{ok} of {len(answers)} answered 200"),
        lag.row("GUI event-loop lag during that burst, worst", "window open on the Inbox, runner making cards"),
    ]


def run_all() -> list[Row]:
    with temporary_data_dir() as directory:
        return bench_burst(directory)


if __name__ == "__main__":
    from bench.common import print_table

    print_table(run_all())
