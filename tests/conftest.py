"""Fixtures shared by the test modules (plain helper functions live in helpers.py)."""
import pytest

from helpers import TANJADERIN, tanjaderin_table


@pytest.fixture(scope="session")
def tanjaderin(tmp_path_factory):
    d = tmp_path_factory.mktemp("tanjaderin")
    return {c: tanjaderin_table(c, d) for c in TANJADERIN}
