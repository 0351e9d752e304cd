"""The sentence encoder's BLAS runs on one thread in the whole process once the encoder is loaded: a thread
per core spinning beside the app's Python made a search's query encoding twenty times slower on a busy
machine (bench_cards.bench_search)."""

from __future__ import annotations

from threadpoolctl import threadpool_info  # type: ignore[import-untyped]

from san_desktop.ai import encoder


def test_blas_runs_on_one_thread_once_the_encoder_is_loaded() -> None:
    assert encoder.warm_up()
    blas = [library for library in threadpool_info() if library["user_api"] == "blas"]
    assert blas  # numpy's BLAS was found (threadpoolctl is installed with the app)
    assert {library["num_threads"] for library in blas} == {1}
