"""Issue 13: no input kills the process. Each batch of hostile call sequences
(tests/crash_fuzz_child.py) runs in its own subprocess, which must end normally: a death by a signal
(SIGSEGV, SIGABRT, SIGBUS) fails the test with the batch's seed, so the case can be replayed with
`python tests/crash_fuzz_child.py SEED EXAMPLES`. Bounded to well under a minute on 2 cores."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("hypothesis")

CHILD = Path(__file__).with_name("crash_fuzz_child.py")
SEEDS = [13, 1300, 130000]
EXAMPLES = int(os.environ.get("MT_CRASH_FUZZ_EXAMPLES", "300"))


@pytest.mark.parametrize("batch_seed", SEEDS)
def test_fuzz_batch_never_dies_by_a_signal(batch_seed):
    result = subprocess.run([sys.executable, str(CHILD), str(batch_seed), str(EXAMPLES)],
                            capture_output=True, text=True, timeout=300)
    if result.returncode < 0:
        name = signal.Signals(-result.returncode).name
        pytest.fail(f"batch {batch_seed} died by {name}; replay: python {CHILD} {batch_seed} {EXAMPLES}\n"
                    f"{result.stderr[-3000:]}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "batch ok" in result.stdout
