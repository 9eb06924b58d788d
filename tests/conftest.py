"""Fixtures shared by the test modules (plain helper functions live in helpers.py).

`pytest tests` runs the fast suite, the same as `make test`: the `slow` tests are deselected by
pyproject's addopts (`-m slow` selects them) and tests/integration (real MPI libraries, the
emulated cluster, Chromium) is collected only when named on the command line, as `make
integration` does.
"""
import os
import sys
from pathlib import Path

import pytest

from helpers import SHARED, TANJADERIN, tanjaderin_table

INTEGRATION = Path(__file__).parent / "integration"


def pytest_configure(config):
    """The `collsel` the tests run is the one installed beside the python running them (so
    `.venv/bin/python -m pytest tests` needs no activated venv)."""
    os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable),
                                          os.environ.get("PATH", "")])
    if not SHARED.is_dir():     # else ninety-odd tests each fail on a fixture's path
        raise pytest.UsageError(f"{SHARED}: no such directory: the tests read the project's "
                                "shared fixtures from shared/ beside the checkout (clone into "
                                "a directory next to it)")


def pytest_ignore_collect(collection_path, config):
    if collection_path != INTEGRATION:
        return None
    named = (Path(a.split("::")[0]).resolve() for a in config.args)
    return not any(p == INTEGRATION or INTEGRATION in p.parents for p in named) or None


@pytest.fixture(scope="session")
def tanjaderin(tmp_path_factory):
    d = tmp_path_factory.mktemp("tanjaderin")
    return {c: tanjaderin_table(c, d) for c in TANJADERIN}

