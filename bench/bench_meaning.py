"""Meaning (issue 25): the embedded sentence encoder against the hashed n-grams it replaced, on the held-out
part of the development set (``tests/data/meaning``), in the same run; and what the encoder costs: its own
batch rate, scraps to cards end to end, similar cards at 100k on vectors of its shape, the memory it adds.
The window's first frame, with the encoder loading behind it, is ``bench_startup``'s row."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import time

import numpy as np

from bench.bench_cards import measure_similar
from bench.common import Row, at_least, at_most, median, percentile, ratio_at_most, temporary_data_dir
from bench.meaning import EMBEDDERS, Matrix, card_texts, notes, quality
from san_desktop.ai import encoder
from san_desktop.ai.calibration import HASHED_EMBEDDING_MODEL, SEMANTIC_EMBEDDING_MODEL, threshold_of
from san_desktop.services.cards import SIMILAR_LIMIT

SEMANTIC, HASHED = SEMANTIC_EMBEDDING_MODEL, HASHED_EMBEDDING_MODEL
TARGET_CARDS_PER_SECOND = 60
SCRAP_CHARACTERS = 600
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def bench_quality() -> list[Row]:
    heldout = notes("heldout")
    texts = card_texts(heldout)
    found = {model: quality(heldout, EMBEDDERS[model](texts), threshold_of(model)) for model in (SEMANTIC, HASHED)}
    ours, old = found[SEMANTIC], found[HASHED]
    label = f"held-out, {len(heldout)} EN/KO notes"

    def row(name: str, value: float, anchor: float, note: str) -> Row:
        return Row(f"{name}, {label}", value * 100, "%", note, anchor * 100, "hashed n-grams (old)")

    return [
        row(
            "top-1 same topic",
            ours.top1,
            old.top1,
            "the nearest other note is on the note's topic; the card path (title, summary, tags, text)",
        ),
        row("precision@5", ours.precision5, old.precision5, "of the five nearest, those on the note's topic"),
        row(
            "nearest other-language note on topic",
            ours.cross_language,
            old.cross_language,
            "the nearest Korean note of an English note is on its topic, and the other way",
        ),
        row(
            "threshold precision",
            ours.within_threshold,
            old.within_threshold,
            f"of the {SIMILAR_LIMIT} nearest, those within the model's threshold (distance {threshold_of(SEMANTIC)} vs "
            f"{threshold_of(HASHED)}, calibrated on the tune part) on topic: {ours.within_count} results vs "
            f"{old.within_count}; calibrated for >= 90%",
        ),
    ]


def scraps(count: int, seed: int = 25) -> list[str]:
    """``count`` distinct scraps of about ``SCRAP_CHARACTERS``, English and Korean in turn: sentences of the
    development set's notes on one topic in one language, in a random order (as a scrap often joins what
    was read in different places; both parts of the set: only speed is measured on them)."""
    by_group: dict[tuple[str, str], list[str]] = {}
    for note in notes("tune") + notes("heldout"):
        sentences = by_group.setdefault((note.topic, note.lang), [])
        sentences += [part for part in _SENTENCE_END.split(note.text) if part.strip()]
    topics = sorted({topic for topic, _lang in by_group})
    rng = random.Random(seed)
    made: dict[str, None] = {}
    while len(made) < count:
        sentences = list(by_group[(rng.choice(topics), ("en", "ko")[len(made) % 2])])
        rng.shuffle(sentences)
        picked: list[str] = []
        for sentence in sentences:
            picked.append(sentence)
            if sum(len(part) + 1 for part in picked) >= SCRAP_CHARACTERS - 50:  # the next sentence ends near it
                break
        made[" ".join(picked)] = None
    return list(made)


def bench_encoder(batch: int = 64, rounds: int = 3) -> tuple[list[Row], float, float]:
    """The encoder alone on ``batch`` scraps in one call, and in one call a scrap as each card job embeds
    today, in turn (a busy moment of the machine falls on both alike). Returns the rows, the batch rate
    and the one-a-call rate (texts/s)."""
    if not encoder.warm_up():
        raise RuntimeError(encoder.failure())
    texts = scraps(batch, seed=64)
    batched, single = [], []
    for _ in range(rounds):
        began = time.perf_counter()
        encoder.encode(texts)
        batched.append(batch / (time.perf_counter() - began))
        began = time.perf_counter()
        for text in texts:
            encoder.encode([text])
        single.append(batch / (time.perf_counter() - began))
    rate, one = median(batched), median(single)
    length = sum(map(len, texts)) / batch
    row = Row(
        f"sentence encoder batch rate, {batch} scraps in one call",
        rate,
        "texts/s",
        f"~{length:.0f} characters, EN/KO in turn, one model thread; one call a scrap (today's card job) "
        f"{one:.1f} texts/s; medians of {rounds}, in turn",
        anchor=TARGET_CARDS_PER_SECOND,
        anchor_name="end-to-end target",
    )
    return [row], rate, one


def bench_end_to_end(batch_rate: float, single_rate: float, wanted: int = 5_000) -> tuple[list[Row], Matrix]:
    """Realistic scraps captured, then turned into cards by the runner with the product's processors and
    the embedded provider, the encoder loaded first (as the app does at start). ``wanted`` scraps, or
    1,000 when the encoder's one-a-call rate says they would take over three minutes. Returns the rows
    and the card vectors made."""
    from bench.bench_jobs import SETTINGS, drain_with_the_product
    from san_desktop.bootstrap import start_backend
    from san_desktop.core.settings import Settings
    from san_desktop.db.vectors import from_stored
    from san_desktop.queue.store import JobStore
    from san_desktop.services.scraps import ScrapService

    count = wanted if wanted / single_rate <= 180 else 1_000
    with temporary_data_dir() as directory:
        backend = start_backend(directory, kind="headless", log_to_stderr=False)
        queue = JobStore(backend.db, SETTINGS)
        capture = ScrapService(backend.db, queue).capture
        for text in scraps(count):
            capture(text)
        elapsed = drain_with_the_product(backend, queue)
        with backend.db.engine.connect() as conn:
            cards = conn.exec_driver_sql("SELECT count(*) FROM knowledge_cards").scalar_one()
            stored = conn.exec_driver_sql(
                "SELECT vector, dim FROM card_embeddings WHERE model_id = ?", (SEMANTIC,)
            ).all()
        backend.close()
    if len(stored) != cards or cards != count:
        raise RuntimeError(f"{count} scraps made {cards} cards, {len(stored)} with the encoder's vectors")
    vectors = np.stack([from_stored(blob, dim) for blob, dim in stored]).astype(np.float32)
    fewer = (
        ""
        if count == wanted
        else f"; {count:,} of the {wanted:,} asked for: at one call a scrap they would take "
        f"~{wanted / (cards / elapsed) / 60:.0f} min here"
    )
    row = Row(
        f"scraps -> cards end to end, {count:,} queued realistic scraps, sentence encoder",
        cards / elapsed,
        "cards/s",
        f"each card job embeds its own card in one call (one call "
        f"a scrap {single_rate:.1f}/s, the batch {batch_rate:.1f}/s: this encoder gains nothing from batches); "
        f"AI pool of {Settings(jobs=SETTINGS).ai_threads} threads (one's encoding beside the other's Python), "
        f"2 jobs a scrap (card, refined text), EN/KO ~{SCRAP_CHARACTERS} characters{fewer}",
        anchor=batch_rate,
        anchor_name="the encoder's own batch rate",
        target=at_least(TARGET_CARDS_PER_SECOND),
    )
    return [row], vectors


def _encoder_shaped(bases: Matrix, count: int, rng: np.random.Generator) -> Matrix:
    """``count`` vectors near the encoder's: each a real card vector with Gaussian noise of a random size
    (cosine ~0.78-0.96 to it, so that its siblings are at ~0.6-0.9 and the rest where the encoder puts
    them), renormalised."""
    dim = bases.shape[1]
    picked = bases[rng.integers(len(bases), size=count)]
    sizes = rng.uniform(0.3, 0.8, size=(count, 1)).astype(np.float32)
    noisy = picked + rng.standard_normal((count, dim)).astype(np.float32) * (sizes / np.sqrt(dim))
    shaped: Matrix = (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)
    return shaped


def bench_similar(bases: Matrix, count: int = 100_000, queries: int = 50) -> list[Row]:
    """``similar_cards`` through the app's index at ``count`` cards of the encoder's space and dimension,
    against an exact numpy scan of the same vectors: random unit vectors, then vectors shaped as the
    encoder's (from the end-to-end run's cards)."""
    rng = np.random.default_rng(25)
    dim = encoder.SEMANTIC_DIMENSIONS
    rows: list[Row] = []
    for kind in ("random unit vectors", f"perturbed from {len(bases):,} real card vectors"):
        if kind.startswith("random"):
            everything = rng.standard_normal((count + queries, dim)).astype(np.float32)
            everything /= np.linalg.norm(everything, axis=1, keepdims=True)
        else:
            everything = _encoder_shaped(bases, count + queries, rng)
        # the last ``queries`` are held out of the index and ask it as a new card would
        run = measure_similar(everything[:count], everything[count:], SEMANTIC, threshold_of(SEMANTIC), queries, rng)
        del everything
        label = f"{count:,} cards, {dim}-d, {kind}"
        exact = "exact numpy scan (matrix @ query, top 10)"
        rows += [
            Row(
                f"similar cards p50, {label}",
                median(run.ours),
                "ms",
                "the app's path (index, live check, cards loaded), the encoder's threshold",
                anchor=median(run.exact),
                anchor_name=exact,
                target=ratio_at_most(1.5),
            ),
            Row(
                f"similar cards p99, {label}",
                percentile(run.ours, 99),
                "ms",
                f"{run.queries} indexed cards asking",
                anchor=percentile(run.exact, 99),
                anchor_name=exact,
            ),
            Row(
                f"similar cards recall@10, {label}",
                run.held_out_recall * 100,
                "%",
                f"{run.held_out} vectors held out of the index ask it for their 10 nearest; the "
                f"indexed cards' similar cards (threshold applied) hold {run.app_overlap:.0%} of their exact 10"
                + (
                    "; random vectors have no near neighbours: a poor stand-in for embeddings"
                    if kind.startswith("random")
                    else "; each a card's encoder vector plus Gaussian noise (cosine 0.78-0.96 to it)"
                ),
                anchor=100,
                anchor_name="exact scan",
                target=at_least(95),
            ),
        ]
    return rows


MEMORY = """
import json
import sys

def resident(field):
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) / 1024 for line in status if line.startswith(field + ":"))

from san_desktop.ai import encoder

before = resident("VmRSS")
if not encoder.warm_up():
    sys.exit(encoder.failure())
loaded = resident("VmRSS")
encoder.encode(json.loads(sys.stdin.read()))
print(json.dumps({"before": before, "loaded": loaded, "batch": resident("VmRSS"), "peak": resident("VmHWM")}))
"""


def bench_memory(batch: int = 64) -> list[Row]:
    """Resident memory of a fresh process before and after ``encoder.warm_up()``, then after a batch."""
    done = subprocess.run(
        [sys.executable, "-c", MEMORY], input=json.dumps(scraps(batch)), capture_output=True, text=True, check=True
    )
    found = json.loads(done.stdout)
    before = found["before"]
    return [
        Row(
            "resident memory the sentence encoder adds",
            found["loaded"] - before,
            "MB",
            f"VmRSS of a fresh process {before:.0f} -> {found['loaded']:.0f} MB across encoder.warm_up() (numpy "
            f"and the encoder module imported before); after one call of {batch} scraps "
            f"+{found['batch'] - before:.0f} MB, peak +{found['peak'] - before:.0f} MB",
            target=at_most(200),
        )
    ]


def run_all() -> list[Row]:
    rows = bench_quality()
    speed, batch_rate, single_rate = bench_encoder()
    drained, vectors = bench_end_to_end(batch_rate, single_rate)
    return rows + speed + drained + bench_similar(vectors) + bench_memory()
