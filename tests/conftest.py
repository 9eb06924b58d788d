"""Shared test helpers: fixture paths and small canonical tables made from them."""
import csv
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
FIXTURES = SHARED / "fixtures"
TANJADERIN = {c: FIXTURES / "datasets" / f"trieste_tanjaderin_{c}_combined.csv"
              for c in ("bcast", "reduce")}


def tanjaderin_table(collective, directory):
    """The Trieste CSV mapped to the canonical columns (names map through algorithms.py)."""
    out = pathlib.Path(directory) / f"tanjaderin_{collective}.csv"
    with open(TANJADERIN[collective], newline="") as src, open(out, "w") as dst:
        dst.write(f"# source={TANJADERIN[collective].name}\n")
        dst.write("collective,comm_size,msg_size,algorithm,segsize,time_us\n")
        for row in csv.DictReader(src):
            dst.write(f"{collective},{row['Processes']},{row['Size']},{row['Algorithm']},0,"
                      f"{row['Latency(us)']}\n")
    return out


@pytest.fixture(scope="session")
def tanjaderin(tmp_path_factory):
    d = tmp_path_factory.mktemp("tanjaderin")
    return {c: tanjaderin_table(c, d) for c in TANJADERIN}
