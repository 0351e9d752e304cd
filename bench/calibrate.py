"""``python -m bench.calibrate``: the calibration of each embedded model from the tune part of the
development set, printed as ``san_desktop/ai/calibration.py`` holds it (paste it there when a model
or the card path changes; a test fails until the two agree)."""

from __future__ import annotations

import sys

from bench.meaning import EMBEDDERS, calibrate, card_texts, notes
from san_desktop.ai.calibration import Calibration


def calibrations() -> dict[str, Calibration]:
    tune = notes("tune")
    texts = card_texts(tune)
    return {model: calibrate(tune, embed(texts)) for model, embed in EMBEDDERS.items()}


def main() -> int:
    for model, found in calibrations().items():
        print(f'    "{model}": {found!r},')
    return 0


if __name__ == "__main__":
    sys.exit(main())
