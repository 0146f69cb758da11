"""Starts the conformance environment (sdk/conformance/env): the real handoff
binary, the sandbox provider and the fault proxy. HANDOFF_BIN and
HANDOFF_CONFORMANCE_ENV name prebuilt binaries; otherwise both are built
from the repository. HANDOFF_TEST_POSTGRES runs the server on PostgreSQL."""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


_BIN_DIR = tempfile.TemporaryDirectory()  # built once per session, removed at exit
_BUILT = {}


def _build(var, name, pkg):
    if os.environ.get(var):
        return os.environ[var]
    if pkg not in _BUILT:
        out = os.path.join(_BIN_DIR.name, name)
        subprocess.run(["go", "build", "-o", out, pkg], cwd=REPO, check=True)
        _BUILT[pkg] = out
    return _BUILT[pkg]


def _start(cards):
    with tempfile.TemporaryDirectory() as tmp:
        handoff = _build("HANDOFF_BIN", "handoff", "./cmd/handoff")
        env_bin = _build("HANDOFF_CONFORMANCE_ENV", "conformance-env", "./sdk/conformance/env")
        log = open(os.path.join(tmp, "env.log"), "w+")
        proc = subprocess.Popen([env_bin, "-handoff", handoff, "-cards", str(cards)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True)
        line = proc.stdout.readline()
        if not line:
            log.seek(0)
            pytest.fail("the conformance environment did not start:\n" + log.read())
        try:
            yield json.loads(line)
        finally:
            proc.stdin.close()
            proc.wait(timeout=30)
            log.close()


@pytest.fixture(scope="session")
def env():
    """The conformance scenarios' environment."""
    yield from _start(REPO / "sdk/conformance/cards.yaml")


@pytest.fixture(scope="session")
def examples_env():
    """An environment with the bundled example operation types, as the README's."""
    yield from _start(REPO / "cards/examples/cards.yaml")
