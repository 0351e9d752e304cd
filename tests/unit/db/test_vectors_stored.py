"""How card vectors are stored: 8-bit codes with a scale, float32 rows of older databases still read."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from san_desktop.db.vectors import _encode, from_stored, to_blob, to_stored


def _unit(count: int, dim: int, seed: int) -> npt.NDArray[np.float32]:
    vectors = np.random.default_rng(seed).standard_normal((count, dim)).astype(np.float32)
    unit: npt.NDArray[np.float32] = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return unit


def test_stored_vectors_are_a_quarter_of_float32_and_keep_their_direction() -> None:
    for vector in _unit(20, 512, 1):
        blob = to_stored(vector)
        assert len(blob) == 512 + 4
        decoded = from_stored(blob, 512)
        assert decoded.dtype == np.float32
        assert float(decoded @ vector) > 0.999
        assert float(np.abs(decoded - vector).max()) <= float(np.abs(vector).max()) / 127


def test_float32_rows_of_older_databases_read_back_exactly() -> None:
    vector = _unit(1, 64, 2)[0]
    assert np.array_equal(from_stored(to_blob(vector), 64), vector)


def test_a_zero_vector_is_stored_without_dividing_by_zero() -> None:
    assert np.array_equal(from_stored(to_stored(np.zeros(8, dtype=np.float32)), 8), np.zeros(8, dtype=np.float32))


def test_the_index_reads_8_bit_and_float32_rows_alike() -> None:
    vectors = _unit(4, 32, 3)
    rows = [("a" * 36, to_stored(vectors[0])), ("b" * 36, to_blob(vectors[1])), ("c" * 36, to_stored(vectors[2]))]
    ids, bits, codes, scales = _encode(rows, 32)
    assert list(ids) == [b"a" * 36, b"b" * 36, b"c" * 36]
    assert codes.shape == (3, 32)
    assert bits.shape == (8, 3)  # word by word
    for index, vector in enumerate(vectors[:3]):
        assert float((codes[index].astype(np.float32) * scales[index]) @ vector) > 0.999
