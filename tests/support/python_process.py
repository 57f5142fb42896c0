"""Python code run in a process of its own, from the repository root, with this Python."""

from __future__ import annotations

import subprocess
import sys

from tests.support.apitest import ROOT

ENDLESS_S = 300  # a limit that stops only a test that would never end, not a slow one


def printed_by(code: str) -> str:
    """What `code` prints (stripped); its stderr in the AssertionError when it fails, and
    subprocess.TimeoutExpired when it runs past `ENDLESS_S`."""
    finished = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                              text=True, timeout=ENDLESS_S)
    assert finished.returncode == 0, finished.stderr
    return finished.stdout.strip()
