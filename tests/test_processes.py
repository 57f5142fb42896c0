"""`referee.processes`: SIGTERM as Ctrl-C for the demo and the benches, and for them only."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FORK_THEN_TERM = """
import os, signal, time
from referee.processes import interrupt_on_sigterm

interrupt_on_sigterm()
for _ in range(10):
    pid = os.fork()
    if pid == 0:
        try:
            time.sleep(5)
        except KeyboardInterrupt:
            os._exit(3)
        os._exit(0)
    os.kill(pid, signal.SIGTERM)  # at once: the child has most likely not run yet
    _, status = os.waitpid(pid, 0)
    print("child", os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))
try:
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(60)
except KeyboardInterrupt:
    print("interrupted")
"""


def test_sigterm_interrupts_the_process_that_asked_and_still_kills_its_forks():
    """A fork (a multiprocessing pool's worker) inherits the handler: interrupted rather
    than killed, or not at all when the signal came before it ran (CPython drops it), a
    pool's worker could live on, waiting for the queue's lock that the pool holds while it
    stops them: `bench/export.py --quick` hung 1 run in 5 beside two busy loops."""
    done = subprocess.run([sys.executable, "-c", FORK_THEN_TERM], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.split("\n") == ["child 15"] * 10 + ["interrupted", ""], done.stderr
