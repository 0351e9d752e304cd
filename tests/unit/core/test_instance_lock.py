from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from san_desktop.core.errors import DataDirectoryError, InstanceLockedError
from san_desktop.core.instance_lock import InstanceLock

HOLD_LOCK = """
import sys
from pathlib import Path
from san_desktop.core.instance_lock import InstanceLock
lock = InstanceLock(Path(sys.argv[1])).acquire()  # kept referenced: the lock lives with the file
print("locked", flush=True)
sys.stdin.read()
"""


def test_second_lock_on_the_same_directory_is_refused(tmp_path: Path) -> None:
    with InstanceLock(tmp_path) as first:
        assert first.held
        with pytest.raises(InstanceLockedError, match="already running") as refused:
            InstanceLock(tmp_path).acquire()
        assert refused.value.holder == str(os.getpid())
    # released: a new instance may start
    with InstanceLock(tmp_path) as again:
        assert again.held


def test_lock_of_a_killed_process_is_free_again(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(InstanceLockedError) as refused:
            InstanceLock(tmp_path).acquire()
        assert refused.value.holder == str(holder.pid)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        if holder.stdin:
            holder.stdin.close()
        if holder.stdout:
            holder.stdout.close()
    with InstanceLock(tmp_path) as lock:
        assert lock.held


@pytest.mark.parametrize("kind", ["a symbolic link", "a named pipe"])
def test_a_lock_file_that_is_not_a_regular_file_is_refused_and_nothing_written_through_it(
    tmp_path: Path, kind: str
) -> None:
    """The holder's pid is written into the lock file: through a symbolic link it would overwrite the file it
    names (a user's document), and a named pipe would hold the start for ever."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    outside = tmp_path / "thesis.txt"
    outside.write_text("three years of work", encoding="utf-8")
    if kind == "a symbolic link":
        (data_dir / "san.lock").symlink_to(outside)
    else:
        os.mkfifo(data_dir / "san.lock")
    with pytest.raises(DataDirectoryError, match=r"lock file .* (is a symbolic link|is not a regular file)"):
        InstanceLock(data_dir).acquire()
    assert outside.read_text(encoding="utf-8") == "three years of work"
