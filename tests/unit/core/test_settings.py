"""One settings schema for loading, ``config set`` and the dialog: types, ranges, finite numbers, URLs."""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from san_desktop.core.settings import (
    SETTINGS_FILE,
    AISettings,
    JobSettings,
    Settings,
    load_settings_checked,
    save_settings,
    with_value,
)


@pytest.mark.parametrize(
    ("section", "key", "value", "reason"),
    [
        ("jobs", "poll_interval_seconds", "nan", "finite"),
        ("jobs", "poll_interval_seconds", "inf", "finite"),
        ("jobs", "max_attempts", "99999999999999999999999", "between 1 and 100"),
        ("jobs", "max_attempts", "0", "between 1 and 100"),
        ("ai", "timeout_seconds", "inf", "finite"),
        ("ai", "timeout_seconds", "-1", "between"),
        ("ai", "base_url", "http://", "with a host"),
        ("ai", "base_url", "ftp://example.org/v1", "http:// or https://"),
        ("ai", "provider", "skynet", "one of local, openai"),
        ("capture", "max_bytes", "lots", "expects a int"),
    ],
)
def test_bad_values_are_refused_with_the_reason(section: str, key: str, value: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason) as refused:
        with_value(Settings(), section, key, value)
    assert f"{section}.{key}" in str(refused.value)


def test_good_values_are_taken() -> None:
    settings = with_value(Settings(), "jobs", "poll_interval_seconds", "0.5")
    settings = with_value(settings, "ai", "base_url", "https://api.openai.com/v1")
    assert settings.jobs.poll_interval_seconds == 0.5
    assert settings.ai.base_url == "https://api.openai.com/v1"


def test_constructing_out_of_range_settings_is_refused_too() -> None:
    with pytest.raises(ValueError, match="finite"):
        JobSettings(poll_interval_seconds=float("nan"))
    with pytest.raises(ValueError, match="with a host"):
        AISettings(base_url="http://")


def test_a_bad_file_keeps_the_good_keys_and_reports_the_bad_ones(tmp_path: Path) -> None:
    (tmp_path / SETTINGS_FILE).write_text(
        '{"jobs": {"poll_interval_seconds": NaN, "max_attempts": 7, "ai_pool_size": 1e400},'
        ' "ai": {"base_url": "http://", "chat_model": "qwen"}, "capture": "oops"}',
        encoding="utf-8",
    )
    settings, problems = load_settings_checked(tmp_path)
    assert settings.jobs.poll_interval_seconds == JobSettings().poll_interval_seconds
    assert settings.jobs.max_attempts == 7
    assert settings.ai.base_url == AISettings().base_url
    assert settings.ai.chat_model == "qwen"
    text = "\n".join(problems)
    assert "jobs.poll_interval_seconds must be a finite number, not nan" in text
    assert "jobs.ai_pool_size expects a int, not inf" in text
    assert "ai.base_url must be an http:// or https:// address with a host, not 'http://'" in text
    assert "capture: not a section" in text


def test_saving_never_writes_nan_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    save_settings(tmp_path, Settings())
    assert json.loads((tmp_path / SETTINGS_FILE).read_text(encoding="utf-8"))["jobs"]["max_attempts"] == 3
    assert not (tmp_path / "settings.json.tmp").exists()


SECRET = "sk-live-0123456789abcdef"


@pytest.mark.parametrize(
    ("section", "key", "value", "home"),
    [
        ("ai", "base_url", f"http://user:{SECRET}@127.0.0.1:11434/v1", "OPENAI_API_KEY"),
        ("ai", "base_url", f"https://{SECRET}@api.example.org/v1", "OPENAI_API_KEY"),
        ("ai", "base_url", f"ftp://user:{SECRET}@example.org", "OPENAI_API_KEY"),  # not echoed for the scheme
        ("github", "api_url", f"https://x-access-token:{SECRET}@ghe.example.org/api/v3", "GH_TOKEN"),
    ],
)
def test_a_url_with_a_user_name_or_password_is_refused_without_echoing_it(
    section: str, key: str, value: str, home: str
) -> None:
    with pytest.raises(ValueError, match=f"{section}.{key} must not contain a user name or password") as refused:
        with_value(Settings(), section, key, value)
    message = str(refused.value)
    assert home in message  # where the secret belongs instead
    assert SECRET not in message
    assert urlsplit(value).netloc.rpartition("@")[0] not in message  # nor the user name


def test_the_settings_dialog_refuses_it_the_same_way() -> None:
    with pytest.raises(ValueError, match="must not contain a user name or password") as refused:
        AISettings(base_url=f"http://u:{SECRET}@host/v1")
    assert SECRET not in str(refused.value)


def test_a_hand_edited_url_with_a_password_loses_it_on_loading_and_it_is_not_reported(tmp_path: Path) -> None:
    (tmp_path / SETTINGS_FILE).write_text(
        json.dumps(
            {
                "ai": {"base_url": f"http://u:{SECRET}@127.0.0.1:8080/v1"},
                "github": {"api_url": f"https://{SECRET}@ghe.example.org/api/v3"},
            }
        ),
        encoding="utf-8",
    )
    settings, problems = load_settings_checked(tmp_path)
    assert settings.ai.base_url == "http://127.0.0.1:8080/v1"  # the address kept, the secret dropped
    assert settings.github.api_url == "https://ghe.example.org/api/v3"
    text = "\n".join(problems)
    assert "ai.base_url holds a user name or password, which is left out: remove it from settings.json" in text
    assert "github.api_url holds a user name or password, which is left out" in text
    assert SECRET not in text


def test_the_embedded_provider_makes_one_card_at_a_time_beside_the_window_and_two_without() -> None:
    embedded = Settings(jobs=JobSettings(ai_pool_size=4))
    assert embedded.ai_threads == min(2, os.cpu_count() or 1)  # `san jobs run`
    assert embedded.ai_threads_with_window == 1
    assert Settings(jobs=JobSettings(ai_pool_size=1)).ai_threads == 1
    server = Settings(jobs=JobSettings(ai_pool_size=4), ai=AISettings(provider="openai"))
    assert server.ai_threads == server.ai_threads_with_window == 4  # answers are waited for: calls overlap


@pytest.mark.parametrize(("stored", "read"), [(3600, 60.0), (3600.0, 60.0), (120, 120.0), (3599.5, 3599.5)])
def test_the_old_lease_default_in_a_settings_file_reads_as_the_new_one(
    tmp_path: Path, stored: float, read: float
) -> None:
    """settings.json holds every value, so the old default (an hour, from before leases were renewed) means one
    nobody chose: it gives way to the new default; any other value is the person's and stays."""
    (tmp_path / SETTINGS_FILE).write_text(json.dumps({"jobs": {"lease_seconds": stored, "max_attempts": 4}}))
    settings, problems = load_settings_checked(tmp_path)
    assert problems == []
    assert settings.jobs.lease_seconds == read
    assert settings.jobs.max_attempts == 4
