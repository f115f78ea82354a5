"""The README's commands run from the clone's root, where Python sees the source folder
`minitensor/` (no compiled `_C` in it) before the installed package."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_package_imports_from_the_clone_root():
    code = "import minitensor as mt; print(mt.Tensor([[1.0, 2.0]]).softmax(1).tolist())"
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[[0.2689414322376251, 0.7310585975646973]]"
