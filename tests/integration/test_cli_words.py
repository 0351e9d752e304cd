"""The command line's refusals are sentences a person can act on, never a traceback, and never echo a
secret: each case as it was reported (issue 23, "state and words"), in a child process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from san_desktop.app import open_app
from tests.support.devices import device_node
from tests.support.processes import child_env, run_san
from tests.support.til import finished_til

SAN = [sys.executable, "-m", "san_desktop.cli.main"]
SECRET = "sk-live-0123456789abcdef"


def _refused(result: subprocess.CompletedProcess[str], code: int, sentence: str) -> None:
    assert result.returncode == code, (result.returncode, result.stderr)
    assert sentence in result.stderr, result.stderr
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    assert "Error:" not in result.stderr, result.stderr  # no exception class names


# --- a secret in a URL setting --------------------------------------------------------------------


@pytest.mark.parametrize("key", ["ai.base_url", "github.api_url"])
def test_config_set_refuses_a_password_in_a_url_and_never_prints_it(data_dir: Path, key: str) -> None:
    result = run_san("config", "set", key, f"http://me:{SECRET}@127.0.0.1:8080/v1")
    _refused(result, 1, f"{key} must not contain a user name or password")
    assert SECRET not in result.stdout + result.stderr
    settings = data_dir / "settings.json"
    assert not settings.exists() or SECRET not in settings.read_text(encoding="utf-8")


def test_config_show_never_prints_a_password_written_into_settings_json(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "settings.json").write_text(
        json.dumps({"ai": {"base_url": f"http://me:{SECRET}@127.0.0.1:8080/v1"}}), encoding="utf-8"
    )
    shown = run_san("config", "show")
    as_json = run_san("config", "show", "--json")
    assert shown.returncode == as_json.returncode == 0
    assert "ai.base_url = http://127.0.0.1:8080/v1" in shown.stdout
    assert "ai.base_url holds a user name or password" in shown.stderr
    assert json.loads(as_json.stdout)["ai"]["base_url"] == "http://127.0.0.1:8080/v1"
    for output in (shown.stdout, shown.stderr, as_json.stdout, as_json.stderr):
        assert SECRET not in output
    assert run_san("scrap", "add", "--text", "the app still starts").returncode == 0
    assert SECRET not in (data_dir / "logs" / "san.log").read_text(encoding="utf-8")


# --- tracebacks -----------------------------------------------------------------------------------


@pytest.fixture
def exported_day(data_dir: Path) -> str:
    with open_app(data_dir, kind="gui", log_to_stderr=False) as app:
        return finished_til(app)


def test_til_export_writes_the_file(exported_day: str, tmp_path: Path) -> None:
    out = tmp_path / "til.md"
    result = run_san("til", "export", exported_day, "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert out.read_text(encoding="utf-8").startswith(f"# TIL {exported_day}")


def test_til_export_into_a_missing_folder_says_so(exported_day: str) -> None:
    result = run_san("til", "export", exported_day, "--out", "/nonexistent/d/x.md")
    _refused(result, 1, "Cannot write /nonexistent/d/x.md: there is no folder /nonexistent/d (create it, or choose")


def test_til_export_to_a_folder_says_to_name_a_file(exported_day: str, tmp_path: Path) -> None:
    result = run_san("til", "export", exported_day, "--out", str(tmp_path))
    _refused(result, 1, f"{tmp_path} is a folder: give a file name, e.g. {tmp_path / f'TIL-{exported_day}.md'}")


def test_til_export_to_a_device_is_refused_even_when_told_to_overwrite(exported_day: str, tmp_path: Path) -> None:
    device = device_node(tmp_path / "full.md", "full")
    result = run_san("til", "export", exported_day, "--out", str(device), "--overwrite")
    _refused(result, 1, f"{device} is a device, not a regular file: nothing was written.")


@pytest.mark.parametrize(
    ("arguments", "sentence"),
    [
        (["scrap", "add", "--text", "--"], "argument --text: expected the text after --"),
        (["scrap", "add", "--text=--"], "argument --text: expected the text after --"),
        (["cards", "list", "--search", "--"], "argument --search: expected the text after --"),
    ],
)
def test_a_double_dash_without_a_value_is_a_usage_error(data_dir: Path, arguments: list[str], sentence: str) -> None:
    _refused(run_san(*arguments), 2, sentence)


def test_a_double_dash_takes_the_next_word_as_the_value(data_dir: Path) -> None:
    added = run_san("scrap", "add", "--json", "--text", "--", "--verbose prints more")
    assert added.returncode == 0, added.stderr
    listed = json.loads(run_san("scrap", "list", "--json").stdout)
    assert [scrap["content"] for scrap in listed] == ["--verbose prints more"]
    searched = run_san("cards", "list", "--search", "--", "--verbose")
    assert searched.returncode == 0, searched.stderr
    assert "Traceback" not in searched.stderr


# --- misleading refusals --------------------------------------------------------------------------


def test_a_missing_file_is_called_missing(data_dir: Path) -> None:
    _refused(run_san("scrap", "add", "--file", "/nonexistent/x"), 1, "No such file: /nonexistent/x")


def test_a_folder_is_called_a_folder(data_dir: Path, tmp_path: Path) -> None:
    _refused(run_san("scrap", "add", "--file", str(tmp_path)), 1, f"{tmp_path} is a folder, not a file")


def test_a_huge_sparse_file_is_refused_by_the_configured_limit(data_dir: Path, tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    with big.open("wb") as handle:
        handle.truncate(2 * 1024**3)  # 2 GB that take no disk
    _refused(
        run_san("scrap", "add", "--file", str(big)),
        1,
        "big.txt is too large to scrap: 2147.5 MB, larger than 1.0 MB (capture.max_bytes); nothing was scrapped.",
    )


def test_standard_input_is_refused_by_the_configured_limit(data_dir: Path) -> None:
    text = "Readers and one writer at once. " * 160_000  # 5 MB: over the old 4 MB read bound as well
    result = subprocess.run(
        [*SAN, "scrap", "add", "-"], input=text, capture_output=True, text=True, env=child_env(), timeout=60,
        check=False,
    )  # fmt: skip
    _refused(
        result, 1, "Standard input is too large to scrap: larger than 1.0 MB (capture.max_bytes); nothing was scrapped."
    )
    assert json.loads(run_san("scrap", "list", "--json").stdout) == []


def test_the_limit_named_is_the_one_configured(data_dir: Path, tmp_path: Path) -> None:
    assert run_san("config", "set", "capture.max_bytes", "2500000").returncode == 0
    big = tmp_path / "big.md"
    with big.open("wb") as handle:
        handle.truncate(12_000_000)
    _refused(run_san("scrap", "add", "--file", str(big)), 1, "12.0 MB, larger than 2.5 MB (capture.max_bytes)")
