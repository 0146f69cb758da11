"""The package installs with the README's command into a fresh venv where pip
reaches no index (CI's situation), and its example runs as a reader would."""

import os
import re
import subprocess
import sys
import venv  # noqa: F401 — fails the import here, not mid-test, without it

import pytest

from conftest import REPO

PKG = REPO / "sdk/python"
EXAMPLE = PKG / "examples/operation.py"


def _offline_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_NO_INDEX="1", PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


def test_installs_with_no_index(tmp_path):
    readme = (PKG / "README.md").read_text()
    command = re.search(r"^    (pip install \./sdk/python)$", readme, re.M)
    assert command, "the README's install command"
    made = subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip("python3 -m venv cannot make a venv with pip here (Debian: apt-get install python3-venv): "
                    + made.stderr.strip()[-300:])
    py = str(tmp_path / "venv/bin/python")
    env = _offline_env()
    args = command.group(1).split()
    installed = subprocess.run([py, "-m"] + args, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    probe = ("import handoff, importlib.metadata as m; d = m.distribution('handoff');"
             "print(handoff.__file__); print(handoff.__version__, d.version, d.metadata['License']);"
             "print(sorted(f.name for f in d.files if f.name in ('LICENSE', 'py.typed')))")
    out = subprocess.run([py, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    where, versions, files = out.stdout.splitlines()
    assert where.startswith(str(tmp_path / "venv")), where
    version = re.search(r'^version = "(.*)"$', (PKG / "pyproject.toml").read_text(), re.M).group(1)
    assert versions == "%s %s Apache-2.0" % (version, version)
    assert files == "['LICENSE', 'py.typed']"
    assert (PKG / "LICENSE").read_bytes() == (REPO / "LICENSE").read_bytes()
    assert re.search(r"^## %s$" % re.escape(version), (PKG / "CHANGELOG.md").read_text(), re.M)


def test_sdist_builds_with_the_backend(tmp_path):
    sys.path.insert(0, str(PKG / "_backend"))
    try:
        import handoff_build
    finally:
        sys.path.pop(0)
    import tarfile
    name = handoff_build.build_sdist(str(tmp_path))
    with tarfile.open(tmp_path / name) as tar:
        names = set(tar.getnames())
    base = name[: -len(".tar.gz")]
    for f in ("pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md", "PKG-INFO", "handoff/__init__.py",
              "handoff/py.typed", "_backend/handoff_build.py"):
        assert base + "/" + f in names


def test_readme_shows_the_example():
    blocks = re.findall(r"```python\n(.*?)```", (PKG / "README.md").read_text(), re.S)
    assert blocks and blocks[0] == EXAMPLE.read_text()


def test_example_completes_then_replays(examples_env):
    env = dict(os.environ, HANDOFF_URL=examples_env["url"], HANDOFF_TOKEN=examples_env["token"],
               SANDBOX_URL=examples_env["sandbox"], PYTHONPATH=str(PKG))
    run = lambda: subprocess.run([sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True, timeout=60)  # noqa: E731
    first, second = run(), run()
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    ref = first.stdout.split()[0]
    assert first.stdout.strip() == ref + " (first run)"
    assert second.stdout.strip() == ref + " (replayed)"
