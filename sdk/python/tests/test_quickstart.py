"""The clients guide's "From Python" example, run as a reader would: a completed
operation, then a replay that does not call the provider again."""

import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import REPO

EXAMPLE = REPO / "sdk/python/examples/quickstart.py"


def test_readme_shows_the_example():
    guide = (REPO / "docs/guides/clients.md").read_text()
    section = guide.split("## From Python", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert blocks and blocks[0] == EXAMPLE.read_text()


def test_quickstart_completes_then_replays(examples_env):
    env = dict(os.environ, HANDOFF_URL=examples_env["url"], HANDOFF_TOKEN=examples_env["token"],
               SANDBOX_URL=examples_env["sandbox"], PYTHONPATH=str(REPO / "sdk/python"))
    first = subprocess.run([sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    second = subprocess.run([sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True, timeout=60)
    assert second.returncode == 0, second.stderr
    ref = first.stdout.split()[0]
    assert first.stdout.strip() == ref + " (first run)"
    assert second.stdout.strip() == ref + " (replayed: the provider was not called)"
