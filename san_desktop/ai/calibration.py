"""What a cosine means, per embedding model: when two cards count as "similar", and the score people see.

Cosines of different models do not mean the same: the sentence encoder puts unrelated notes at 0.3–0.5,
hashed n-grams at 0–0.2. So each embedded model carries a calibration made from the tune part of the
labelled development set (``tests/data/meaning/tune.jsonl``) by ``python -m bench.calibrate``, which
prints this table; a test checks the constants are what the script computes:

- ``threshold``: the cosine distance within which the nearest cards of a card are on its topic at least
  90% of the time (the seeds' "threshold, else the K nearest": past it the nearest are shown as such);
- ``slope``/``midpoint``: a logistic fit of "on topic" against the cosine of the nearest cards, so the
  score shown (window and CLI) is the chance that a result is on topic, whichever model made it;
- ``search_floor``: a short query sits further from a card than a card from a card; from this cosine of a
  query a card counts as found by meaning (chosen by hand on the tune notes with their topics' names as
  queries: half of the cards above it are on the topic, half of the topic's cards are above it; search
  ranks them by reciprocal rank beside the word matches).

Models the app does not ship (an OpenAI-compatible server's) get the seeds' threshold 0.5 and their
cosine as the score: nothing is known about them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

HASHED_EMBEDDING_MODEL = "local-hashed-ngram-v1"
SEMANTIC_EMBEDDING_MODEL = "use-multilingual-v3"
GENERIC_THRESHOLD = 0.5  # the seeds' rule, for a model nothing is known about
TARGET_PRECISION = 0.9


@dataclass(frozen=True)
class Calibration:
    threshold: float  # cosine distance: nearest cards within it are on topic >= TARGET_PRECISION
    slope: float
    midpoint: float  # the cosine at which a result is as likely on topic as not
    search_floor: float | None = None  # a query's cosine from which a card is found by meaning (None: never)

    def score(self, distance: float) -> float:
        return 1.0 / (1.0 + math.exp(-self.slope * ((1.0 - distance) - self.midpoint)))


# made by `python -m bench.calibrate` from tests/data/meaning/tune.jsonl
CALIBRATIONS: dict[str, Calibration] = {
    SEMANTIC_EMBEDDING_MODEL: Calibration(threshold=0.28, slope=9.7, midpoint=0.55, search_floor=0.25),
    HASHED_EMBEDDING_MODEL: Calibration(threshold=0.64, slope=7.6, midpoint=0.49),
}


def threshold_of(model_id: str | None) -> float:
    """The cosine distance within which cards of ``model_id`` count as similar."""
    known = CALIBRATIONS.get(model_id or "")
    return known.threshold if known is not None else GENERIC_THRESHOLD


def search_floor_of(model_id: str | None) -> float | None:
    """A query's cosine from which cards of ``model_id`` are found by meaning; None: words only (the
    hashed n-grams measure spelling, which the word indexes do better; an unknown model, nothing known)."""
    known = CALIBRATIONS.get(model_id or "")
    return known.search_floor if known is not None else None


def score_of(model_id: str | None, distance: float) -> float:
    """Between 0 and 1: the chance a result this near is on topic (the cosine for unknown models)."""
    known = CALIBRATIONS.get(model_id or "")
    if known is None:
        return min(1.0, max(0.0, 1.0 - distance))
    return known.score(distance)
