"""The one bounded reader behind every input path (issue: unbounded reads)."""

from __future__ import annotations

import io
import os
import threading
from pathlib import Path

import pytest

from san_desktop.core.inputs import read_file, read_stdin
from san_desktop.core.text import RejectedContentError


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "note.md"
    path.write_bytes(b"# WAL\nreaders and one writer\n")
    assert read_file(path, 1000) == b"# WAL\nreaders and one writer\n"


def test_a_symlink_to_dev_zero_is_refused_without_reading(tmp_path: Path) -> None:
    link = tmp_path / "z.txt"
    link.symlink_to("/dev/zero")
    with pytest.raises(RejectedContentError, match="not a regular file"):
        read_file(link, 1_000_000)


def test_a_fifo_without_a_writer_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "f.txt"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            read_file(fifo, 1000)
        except RejectedContentError as exc:
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive(), "reading a FIFO hung"
    assert len(outcome) == 1
    assert "not a regular file" in str(outcome[0])


def test_a_file_growing_past_its_stat_size_stops_at_the_limit(tmp_path: Path) -> None:
    # /proc files report size 0 and then yield data: the limit is applied to what is read
    with pytest.raises(RejectedContentError, match="too large"):
        read_file(Path("/proc/self/maps"), 10)


def test_a_large_file_is_refused_by_its_size(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(b"a" * 5000)
    with pytest.raises(RejectedContentError, match="too large"):
        read_file(path, 4000)


def test_endless_standard_input_stops_at_the_limit() -> None:
    read_end, write_end = os.pipe()
    stop = threading.Event()

    def endless() -> None:
        with open(write_end, "wb", buffering=0) as out:
            try:
                while not stop.is_set():
                    out.write(b"y\n" * 4096)
            except BrokenPipeError:
                pass

    writer = threading.Thread(target=endless, daemon=True)
    writer.start()
    try:
        with open(read_end, "rb", buffering=0) as stream, pytest.raises(RejectedContentError, match="too large"):
            read_stdin(100_000, stream=stream)
    finally:
        stop.set()
        writer.join(10)


def test_silent_standard_input_times_out() -> None:
    read_end, write_end = os.pipe()
    try:
        with open(read_end, "rb", buffering=0) as stream, pytest.raises(RejectedContentError, match="Nothing arrived"):
            read_stdin(1000, stream=stream, idle_timeout=0.2)
    finally:
        os.close(write_end)


def test_closed_standard_input_is_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", None)
    with pytest.raises(RejectedContentError, match="Standard input is closed"):
        read_stdin(1000)


def test_a_stream_without_a_file_descriptor_is_explained() -> None:
    with pytest.raises(RejectedContentError, match="Standard input is closed"):
        read_stdin(1000, stream=io.BytesIO(b"text"))
