"""`collsel check-rules FILE --tree TREE...`: one rules file of several collectives evaluated
against each collective's tree, one line per collective."""
import re

import pytest

from helpers import switching_table
from test_ompi_rules import run

# collective -> (LOW below 1024 bytes, HIGH from 2048): alltoall's rules match P · m (exact per
# P), scan's ignore the count (one rule per block: LOW, the method at the smaller of the two
# equally measured m), bcast's match m.
SWITCH = {"alltoall": (2, 3), "bcast": (2, 8), "scan": (2, 1)}
GRID = 3 * 4       # P = 2, 4, 8 x m = 256, 512, 2048, 4096


@pytest.fixture(scope="module")
def emitted(tmp_path_factory):
    """(rules file of the three trees, {collective: tree.json}, a gather tree not in the file)."""
    d = tmp_path_factory.mktemp("check_trees")
    trees = {}
    for coll, (low, high) in {**SWITCH, "gather": (1, 2)}.items():
        done = run("build", switching_table(d / f"{coll}.csv", coll, low, high), "--out", d / coll)
        assert done.returncode == 0, done.stderr
        trees[coll] = d / coll / "tree.json"
    done = run("emit", "--target", "ompi-rules", *(trees[c] for c in SWITCH),
               "--out", d / "rules.conf")
    assert done.returncode == 0, done.stderr
    return d / "rules.conf", trees


def lines_of(stdout, path):
    return {m.group(1): m.group(2) for m in re.finditer(rf"^{re.escape(str(path))}: (\w+) \(.*?\): "
                                                         r"(.*)$", stdout, re.M)}


def test_every_collective_of_the_file_is_evaluated_against_its_tree(emitted):
    path, trees = emitted
    done = run("check-rules", path, *(a for c in SWITCH for a in ("--tree", trees[c])))
    assert done.returncode == 0, done.stderr
    said = lines_of(done.stdout, path)
    assert set(said) == set(SWITCH), done.stdout
    assert said["alltoall"] == f"the file decides as the tree on {GRID} of {GRID} grid points"
    assert said["bcast"] == f"the file decides as the tree on {GRID} of {GRID} grid points"
    # scan: one rule per block (LOW), the tree's HIGH at m >= 2048 is lost
    assert said["scan"].startswith(f"the file decides as the tree on 6 of {GRID} grid points; "
                                   "differs on 6 (50.00%), first at P=2 m=2048: the file "), said
    assert "(alg 2, seg 0, fan 0), the tree " in said["scan"] and said["scan"].endswith(
        "(alg 1, seg 0, fan 0)")


def test_a_changed_rule_and_a_missing_tree_are_reported(emitted, tmp_path):
    path, trees = emitted
    text = path.read_text()
    # bcast's HIGH rule (scatter_allgather, 8) replaced by chain (2): the m >= 2048 half differs
    changed = tmp_path / "changed.conf"
    changed.write_text(re.sub(r"^(\d+ )8( 0 0  # m >= )", r"\g<1>2\2", text, count=1,
                              flags=re.M))
    assert changed.read_text() != text
    done = run("check-rules", changed, "--tree", trees["bcast"], "--tree", trees["gather"])
    assert done.returncode == 0, done.stderr
    said = lines_of(done.stdout, changed)
    assert said["bcast"].startswith(f"the file decides as the tree on 6 of {GRID} grid points; "
                                    "differs on 6 (50.00%), first at P=2 m=2048"), said
    # gather has no rule in the file: Open MPI's fixed decision (alg 0) everywhere
    assert said["gather"].startswith(f"the file decides as the tree on 0 of {GRID} grid points; "
                                     "differs on 12 (100.00%), first at P=2 m=256: the file defer "
                                     "(Open MPI's default) (alg 0, seg 0, fan 0)"), said
    assert f"{changed}: no --tree for alltoall (id 3), scan (id 14), which the file holds" \
        in done.stdout


def test_two_trees_of_one_collective_are_refused(emitted):
    path, trees = emitted
    done = run("check-rules", path, "--tree", trees["bcast"], "--tree", trees["bcast"])
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("collsel: error: ") and "a second tree for bcast" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
