"""The browser extension's endpoint under a burst: 200 real-sized pages sent at once (8 connections, from
another process) to the open window, each page's article taken from the HTML sent; how long until all are answered,
and the window's worst event-loop lag meanwhile (the cards that follow are made by the runner too)."""

from __future__ import annotations

import html
import json
import subprocess
import sys
import time
from pathlib import Path

from bench.common import LagMeter, Row, open_window, temporary_data_dir, wait_until

PAGES = 200
CONNECTIONS = 8
ARTICLE_PARAGRAPHS = 8


def rendered_pages(count: int = PAGES) -> list[str]:
    """What a browser sends: a blog page's whole rendered DOM (head with styles and an inline script's data,
    a navigation of many links, a sidebar, comments, a footer: ~60 KB) around an article of real prose (eight
    docstring paragraphs of the standard library and installed packages, ~4 KB), a different one a page."""
    from tests.support.real_text import paragraphs

    texts = [html.escape(text) for text in paragraphs()]
    style = (
        "<style>" + "".join(f".c{n}{{margin:{n}px;padding:{n % 7}px;color:#{n:06x}}}" for n in range(300)) + "</style>"
    )
    data = json.dumps({"posts": [{"id": n, "title": f"Post {n}", "tags": ["db", "python"]} for n in range(400)]})
    nav = "<nav><ul>" + "".join(f'<li><a href="/topics/{n}">Topic {n}</a></li>' for n in range(80)) + "</ul></nav>"
    aside = (
        "<aside><h2>Related</h2><ul>"
        + "".join(f'<li><a href="/posts/{n}">{texts[n % len(texts)][:60]}</a></li>' for n in range(30))
        + "</ul></aside>"
    )
    pages = []
    for n in range(count):
        body = [texts[(n * ARTICLE_PARAGRAPHS + k) % len(texts)] for k in range(ARTICLE_PARAGRAPHS)]
        title = body[0].split(". ")[0][:80]
        article = f"<article><h1>{title}</h1>" + "".join(f"<p>{p}</p>" for p in body) + "</article>"
        comments = (
            "<section class='comments'>"
            + "".join(
                f"<div class='comment'><b>reader{k}</b><p>{texts[(n + k) % len(texts)][:200]}</p></div>"
                for k in range(6)
            )
            + "</section>"
        )
        pages.append(
            f"<!DOCTYPE html><html><head><title>{title} | A blog</title>{style}"
            f"<script type='application/json'>{data}</script></head><body>{nav}<main>{article}{comments}</main>"
            f"{aside}<footer>© a blog · <a href='/about'>About</a> · <a href='/feed'>Feed</a></footer></body></html>"
        )
    return pages


# The pages come from another process, as from a browser: senders in the window's own process would
# compete with it for the GIL, which no browser does.
SENDER = """
import json, sys, threading
import httpx
port, token, connections, pages = json.loads(sys.stdin.readline())
sys.stdin.readline()  # "go": sent once the window's lag is being measured
answers = []
lock = threading.Lock()

def send(numbers):
    with httpx.Client(timeout=60) as client:
        for n in numbers:
            response = client.post(
                f"http://127.0.0.1:{port}/v2/scraps",
                json={"url": f"https://blog.example/{n}", "html": pages[n], "kind": "page"},
                headers={"Authorization": f"Bearer {token}", "Origin": "chrome-extension://bench"},
            )
            with lock:
                answers.append(response.status_code)

senders = [threading.Thread(target=send, args=(range(start, len(pages), connections),)) for start in range(connections)]
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
        # the pages are made and handed to the sender before the lag is measured: writing megabytes to a
        # pipe is the benchmark's work on the GUI thread, not the app's
        sender = subprocess.Popen(
            [sys.executable, "-c", SENDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert sender.stdin is not None
        assert sender.stdout is not None
        sender.stdin.write(json.dumps([port, token, CONNECTIONS, rendered_pages()]) + "\n")
        sender.stdin.flush()
        lag = LagMeter()
        lag.start()
        began = time.perf_counter()
        sender.stdin.write("go\n")
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
