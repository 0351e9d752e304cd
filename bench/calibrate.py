"""``python -m bench.calibrate``: the calibration of each embedded model from the tune part of the
development set, printed as ``san_desktop/ai/calibration.py`` holds it (paste it there when a model
or the card path changes; a test fails until the two agree). ``--centroids`` writes the category
centroids of the shipped category examples (``san_desktop/ai/category_centroids.npz``; a test fails
until they are what the examples give)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from bench.meaning import EMBEDDERS, calibrate, card_texts, notes
from san_desktop.ai.calibration import Calibration


def calibrations() -> dict[str, Calibration]:
    tune = notes("tune")
    texts = card_texts(tune)
    return {model: calibrate(tune, embed(texts)) for model, embed in EMBEDDERS.items()}


def write_centroids() -> Path:
    from san_desktop.ai import categories, encoder

    names, centroids = categories.make_centroids(categories.load_examples())
    target = Path(categories.__file__).with_name(categories.CENTROIDS_FILE)
    np.savez_compressed(
        target, model=np.array(encoder.SEMANTIC_EMBEDDING_MODEL), categories=np.array(names), centroids=centroids
    )
    return target


def main() -> int:
    if "--centroids" in sys.argv[1:]:
        print(f"wrote {write_centroids()}")
        return 0
    for model, found in calibrations().items():
        print(f'    "{model}": {found!r},')
    return 0


if __name__ == "__main__":
    sys.exit(main())
