"""The embedded provider's cards (issue 16): time per scrap, and quality on the labelled development set
under tests/data/cards — category accuracy (target ≥ 90% on the held-out part) and tag precision (the share
of tags made that are among the tags a person gave the text).

``python -m bench.bench_analysis`` also prints the held-out confusion matrix."""

from __future__ import annotations

import statistics
import sys
import time

from bench.bench_cards import SAMPLE
from bench.common import Row, at_least, at_most, print_table
from san_desktop.ai import categories
from san_desktop.ai.base import DEFAULT_CATEGORIES
from san_desktop.ai.local import LocalProvider
from tests.support.dev_set import evaluate, load

TARGET_MS = 10.0


def _per_scrap(provider: LocalProvider, texts: list[str], rounds: int) -> float:
    """Milliseconds per scrap for analysis and the embedding the card job also makes."""
    timings = []
    for _ in range(rounds):
        began = time.perf_counter()
        for text in texts:
            draft = provider.analyze_card(text, DEFAULT_CATEGORIES)
            provider.embed([f"{draft.title}\n{draft.summary}\n{text}"])
        timings.append((time.perf_counter() - began) * 1000 / len(texts))
    return statistics.median(timings)


def bench_speed() -> list[Row]:
    examples = categories.load_examples()
    began = time.perf_counter()
    categories.train(examples, categories.CATEGORY_KEYWORDS)
    training = (time.perf_counter() - began) * 1000
    provider = LocalProvider()
    provider.analyze_card(SAMPLE, DEFAULT_CATEGORIES)  # the model trained once, as in the app
    synthetic = [f"{n} {SAMPLE * 3}" for n in range(200)]
    real = [example.text for example in load("tune") + load("heldout")]
    mean_length = statistics.mean(len(text) for text in real)
    return [
        Row(
            "embedded analysis + embedding per scrap",
            _per_scrap(provider, synthetic, 3),
            "ms",
            f"~{len(synthetic[0])} characters (the earlier figure's text)",
            target=at_most(TARGET_MS),
        ),
        Row(
            "embedded analysis + embedding per scrap, real scraps",
            _per_scrap(provider, real, 3),
            "ms",
            f"{len(real)} dev-set texts, mean {mean_length:.0f} characters",
            target=at_most(TARGET_MS),
        ),
        Row(
            "category model training (once per process)",
            training,
            "ms",
            f"{len(examples)} shipped examples + keyword lists",
        ),
    ]


def bench_quality() -> list[Row]:
    heldout, tune = evaluate("heldout"), evaluate("tune")
    return [
        Row(
            "category accuracy, held-out texts",
            heldout.accuracy * 100,
            "%",
            f"{heldout.correct}/{heldout.total}, never tuned on",
            target=at_least(90.0),
        ),
        Row("category accuracy, tuning texts", tune.accuracy * 100, "%", f"{tune.correct}/{tune.total}"),
        Row(
            "tag precision, held-out texts",
            heldout.tag_precision * 100,
            "%",
            f"{heldout.good_tags}/{heldout.tags} tags among a person's tags",
        ),
        Row("titles/tags breaking the rules (both parts)", len(heldout.problems) + len(tune.problems), "count"),
    ]


def run_all() -> list[Row]:
    return bench_speed() + bench_quality()


if __name__ == "__main__":
    print_table(run_all())
    print()
    print("Held-out confusion matrix (rows: expected, columns: chosen)")
    print(evaluate("heldout").matrix())
    sys.exit(0)
