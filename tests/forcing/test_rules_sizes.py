"""Proof on real Open MPI 4.1.4 that one `collsel emit --target ompi-rules` file for several
collectives takes effect at the message sizes of the tree, also where Open MPI's dynamic decision
matches rules at P · m (core.mpi.rules_size: alltoall, allgather, gather).

Per collective, a table in which method LOW is fastest below 1024 bytes (collsel's m: one rank's
block) and HIGH from 2048, at P = 2, 4, 8; its exact tree; one rules file for all three. At P = 4
the benchmark (no --methods: MPI_COMM_WORLD under coll/tuned's dynamic rules) runs m = 512 and
2048, and the LD_PRELOAD probe (collsel_coll_probe.c, as test_forcing.py) sees the tree's method on each
side. The thresholds matter: a file holding the tree's m cut unconverted would run HIGH at 512
too (Open MPI matches 4 · 512 = 2048 bytes). LOW and HIGH differ from what the fixed decision
picks at P = 4 on both sides, so the fixed decision cannot pass for the file."""
import subprocess

import pytest

from collsel.core.mpi import rules_size
from helpers import switching_table
from test_forcing import FUNCTIONS, _launch, outermost, probe  # noqa: F401 (probe: fixture)

# collective -> (LOW below 1024 bytes, HIGH from 2048); the fixed decision of 4.1.4 at P = 4:
# alltoall linear_sync (4) below 8192, allgather recursive_doubling (3), gather binomial (2)
# below 1024 then basic_linear (1) (coll_tuned_decision_fixed.c:275-279, :1120-1121, :1427-1431)
SWITCH = {"alltoall": (2, 3), "allgather": (2, 4), "gather": (1, 2)}
SIZES = (512, 2048)
NPROCS = 4


def _collsel(*args):
    done = subprocess.run(["collsel", *map(str, args)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def rules_file(tmp_path_factory):
    """(the rules file, {collective: tree.json})."""
    d = tmp_path_factory.mktemp("rules")
    trees = {}
    for coll, (low, high) in SWITCH.items():
        _collsel("build", switching_table(d / f"{coll}.csv", coll, low, high), "--out", d / coll)
        trees[coll] = d / coll / "tree.json"
    said = _collsel("emit", "--target", "ompi-rules", *trees.values(), "--out", d / "rules.conf")
    for coll in SWITCH:
        assert f"{coll}: " in said and "Open MPI matches rules at P · m" in said
    assert said.count("decides differently from the tree on 0 of") == len(SWITCH), said
    return d / "rules.conf", trees


@pytest.mark.slow
@pytest.mark.parametrize("collective", sorted(SWITCH))
def test_a_rules_file_takes_effect_at_the_trees_sizes(probe, rules_file, tmp_path, collective):
    path, trees = rules_file
    low, high = SWITCH[collective]
    want = {}
    for m in SIZES:   # the tree's method at P = 4, by `collsel query`
        ids = _collsel("query", trees[collective], "--comm-size", NPROCS, "--msg-size", m, "--ids")
        want[m] = int(ids.split()[0])
        checked = _collsel("check-rules", path, "--collective", collective, "--query", NPROCS,
                           m, "--ids")
        assert checked.split() == ids.split()
    assert want == {512: low, 2048: high}
    # the cut lies between 512 and 2048; unconverted, Open MPI's size at 512 would pass it
    assert rules_size.rule_msg_size(collective, NPROCS, 512) == 2048
    status, stderr, calls = _launch(probe, tmp_path, collective,
                                    {"coll_tuned_use_dynamic_rules": 1,
                                     "coll_tuned_dynamic_rules_filename": path},
                                    None, ",".join(map(str, SIZES)), NPROCS)
    assert status == 0, stderr[-2000:]
    ran = {m: outermost(calls, -1, m) for m in SIZES}
    print(f"\n{collective} at P={NPROCS} under {path.name}: " + ", ".join(
        f"m={m} -> {'/'.join(sorted(ran[m]))}" for m in SIZES))
    for m in SIZES:
        assert ran[m] == {FUNCTIONS[collective][want[m]]}, (m, ran[m])
