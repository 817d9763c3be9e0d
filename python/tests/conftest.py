import os
import shutil
import subprocess

import numpy as np
import pytest


@pytest.fixture(scope="session")
def cli():
    """The `wayfarer` command of this checkout (WAYFARER_CLI, else target/*/wayfarer)."""
    path = os.environ.get("WAYFARER_CLI")
    if not path:
        root = os.path.join(os.path.dirname(__file__), "..", "..", "target")
        for p in ("release/wayfarer", "debug/wayfarer"):
            if os.path.exists(os.path.join(root, p)):
                path = os.path.join(root, p)
                break
    path = path or shutil.which("wayfarer")
    if not path:
        pytest.skip("no wayfarer command: set WAYFARER_CLI (scripts/python-test.sh does)")

    def run(*args):
        r = subprocess.run([path, *args], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return r

    return run


def random_graph(n, m, seed, weighted=False):
    rng = np.random.default_rng(seed)
    ei = rng.integers(0, n, size=(2, m))
    w = rng.uniform(1.0, 5.0, size=m).astype(np.float32) if weighted else None
    return ei, w
