"""The log4j2 config build_session hands the JVM: whole, and only from a private directory."""

from __future__ import annotations

import os
import tempfile
import threading

import pytest

from rillet.spark.session import _quiet_logging_options


@pytest.fixture
def tmp_root(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_concurrent_writers_leave_one_whole_file(tmp_root):
    options: list[str] = []
    threads = [threading.Thread(target=lambda: options.append(_quiet_logging_options("WARN")))
               for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(set(options)) == 1
    home = tmp_root / f"rillet-{os.getuid()}"
    assert [p.name for p in home.iterdir()] == ["log4j2-warn.properties"]
    assert (home / "log4j2-warn.properties").read_text().count("warn") >= 1
    assert home.stat().st_mode & 0o777 == 0o700


def test_a_directory_others_can_write_is_refused(tmp_root):
    home = tmp_root / f"rillet-{os.getuid()}"
    home.mkdir()
    home.chmod(0o777)
    with pytest.raises(RuntimeError, match="not a private directory"):
        _quiet_logging_options("ERROR")
