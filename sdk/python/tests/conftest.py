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


def _build(var, out, pkg):
    if os.environ.get(var):
        return os.environ[var]
    subprocess.run(["go", "build", "-o", out, pkg], cwd=REPO, check=True)
    return out


@pytest.fixture(scope="session")
def env():
    with tempfile.TemporaryDirectory() as tmp:
        handoff = _build("HANDOFF_BIN", os.path.join(tmp, "handoff"), "./cmd/handoff")
        env_bin = _build("HANDOFF_CONFORMANCE_ENV", os.path.join(tmp, "conformance-env"), "./sdk/conformance/env")
        log = open(os.path.join(tmp, "env.log"), "w+")
        proc = subprocess.Popen([env_bin, "-handoff", handoff, "-cards", str(REPO / "sdk/conformance/cards.yaml")],
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
def scenarios():
    return json.loads((REPO / "sdk/conformance/scenarios.json").read_text())["scenarios"]
