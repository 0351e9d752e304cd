"""What the starred-repository tests learn and star: cards about SQLite and React, and three stars in each of
five topics (each topic in its own language)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from san_desktop.app import SanApp
from san_desktop.core.settings import GitHubSettings
from tests.support.github_server import TOKEN, FakeGitHub, fake_github_server
from tests.support.til import cards_of

STAR_CARDS = (
    "SQLite WAL mode lets readers continue while a writer commits to the database.",
    "SQLite checkpoints copy pages from the write-ahead log back into the database file.",
    "React hooks: useEffect runs after render and its cleanup runs before the next effect.",
    "React components keep state with useState and re-render when it changes.",
)
STAR_TOPICS: dict[str, tuple[str, tuple[str, ...], str]] = {  # topic: (description, topics, language)
    "sqlite": (
        "SQLite database engine: WAL mode, write-ahead log, checkpoints and SQL queries",
        ("sqlite", "database"),
        "C",
    ),
    "react": (
        "React hooks and components for building user interfaces with state and effects",
        ("react", "hooks"),
        "TypeScript",
    ),
    "kubernetes": ("Kubernetes operator for pods, deployments and cluster networking", ("kubernetes", "devops"), "Go"),
    "rust": ("Rust borrow checker, ownership and lifetimes explained with examples", ("rust", "compiler"), "Rust"),
    "photo": ("Film photography darkroom notes about exposure and developing negatives", ("film",), "Python"),
}
PER_TOPIC = 3


@contextmanager
def connected_github(app: SanApp) -> Iterator[FakeGitHub]:
    """A GitHub-shaped server on 127.0.0.1 that ``app``'s settings and token point at."""
    with fake_github_server() as fake:
        app.save_settings(replace(app.settings, github=GitHubSettings(api_url=fake.url)))
        app.connections.set_github_token(TOKEN)
        yield fake


def learn_sqlite_and_react(app: SanApp) -> None:
    """The learner's cards: two about SQLite, two about React."""
    cards_of(app, STAR_CARDS)


def star_topics(github: FakeGitHub) -> None:
    """Fifteen stars: three per topic, named ``{topic}-org/{topic}-tool-{n}``."""
    for topic, (description, topics, language) in STAR_TOPICS.items():
        for n in range(PER_TOPIC):
            github.star(
                f"{topic}-org/{topic}-tool-{n}", f"{description} ({n})", topics, language=language, stargazers_count=n
            )
