"""`python -m referee` is the `referee` command (issue 15.9)."""

from __future__ import annotations

import subprocess
import sys

from tests.support.apitest import ROOT, V1_RECORD, V1_SECRET


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)


def test_python_dash_m_referee_runs_the_same_commands():
    as_module = run("-m", "referee", "verify", str(V1_RECORD), "--key", V1_SECRET)
    as_cli = run("-m", "referee.cli", "verify", str(V1_RECORD), "--key", V1_SECRET)
    assert as_module.returncode == 0 and as_module.stdout.rstrip().endswith("VALID")
    assert as_module.stdout == as_cli.stdout
    usage = run("-m", "referee", "--help")
    assert usage.returncode == 0 and usage.stdout.startswith("usage: referee ")
    for command in ("serve", "worker", "play", "verify", "check-bot", "tournament"):
        assert command in usage.stdout
    assert run("-m", "referee", "no-such-command").returncode == 2
