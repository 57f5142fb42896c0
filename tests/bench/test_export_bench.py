"""bench/export.py runs in its tiny `--quick` mode and prints its figures and its goal (as
tests/bench/test_bench_scripts.py does for the other scripts), so it cannot rot. No timing
is asserted: speed is measured, not tested."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_export_bench_prints_its_figures_and_goal():
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "export.py"), "--quick"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "goal:" in done.stdout
    for label in ("ndjson, 1 process", "ndjson, --jobs 2", "parquet, 1 process",
                  "API pages (read_page)", "unpack kept (zstd)", "kept decisions",
                  "played again: ndjson, --jobs 2", "engine observation",
                  "best records/s per game"):
        assert label in done.stdout, f"{label!r} missing from:\n{done.stdout}"
