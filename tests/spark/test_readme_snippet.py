"""The README's Spark snippet, run as a user would from a plain shell: no PYSPARK_PYTHON,
and a `python3` on PATH that is not this interpreter (so it lacks pyspark's and
rillet's dependencies). The snippet is read from README.md, so the two stay in step."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
README_URL = "redis://127.0.0.1:6379"
SYSTEM_PYTHON = "/usr/bin/python3"


def readme_snippet() -> str:
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Spark\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "the README's Spark section has no python snippet"
    return match.group(1)


def test_the_readme_snippet_returns_rows_without_pyspark_python(request, client, url, tmp_path):
    if request.node.callspec.params["stream_server"] != "rillet":
        pytest.skip("one server is enough: this checks the Python environment, not the server")
    if (
        not Path(SYSTEM_PYTHON).exists()
        or Path(SYSTEM_PYTHON).resolve() == Path(sys.executable).resolve()
    ):
        pytest.skip(f"needs a {SYSTEM_PYTHON} that is not the test interpreter")
    for i in range(1, 4):
        client.execute_command("XADD", "sensors", f"{i}-0", "temperature", f"{i}9.8")
    snippet = readme_snippet()
    assert README_URL in snippet
    script = tmp_path / "snippet.py"
    script.write_text(snippet.replace(README_URL, url))

    bin_dir = tmp_path / "bin"  # PATH's python3 is the system's, not this venv's
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(SYSTEM_PYTHON)
    java = shutil.which("java")
    path = [str(bin_dir), *([str(Path(java).parent)] if java else []), "/usr/bin", "/bin"]
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV", "SPARK_HOME")
    }
    env.update(PATH=os.pathsep.join(path), PYTHONPATH=str(ROOT / "src"))
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    env["PYSPARK_SUBMIT_ARGS"] = "--conf spark.ui.enabled=false pyspark-shell"  # no UI port
    done = subprocess.run(
        [sys.executable, str(script)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    shown = [line for line in done.stdout.splitlines() if "sensors" in line]
    assert len(shown) == 3, done.stdout
    assert [line.split("|")[2].strip() for line in shown] == ["1-0", "2-0", "3-0"]
