"""Committed examples of what collsel emits (tests/golden/), so a change to a template or an
emitter shows in review as a diff of real files, not only as a passing test: each target's
output for fixed trees built from our own measured tables (bench-data/), compared byte for
byte with a fresh build and emit. After an intended change: `make golden` writes them anew
(COLLSEL_REGEN_GOLDEN=1 on this module), and the diff is reviewed with the change."""
import os
import pathlib

import pytest

from collsel import cli

from helpers import REPO

GOLDEN = REPO / "tests" / "golden"
REGEN = os.environ.get("COLLSEL_REGEN_GOLDEN") == "1"

# (tree name, measured table, build flags): depth 3 keeps the files short enough to read
TREES = {
    "openmpi-bcast": ("bench-data/paired/bcast-openmpi.csv", ["--max-depth", "3"]),
    "mpich-bcast": ("bench-data/paired/bcast-mpich.csv", ["--max-depth", "3"]),
    # Intel MPI's JSON file cannot defer a range (collsel refuses such a tree for it)
    "intel-bcast": ("bench-data/more-mpis/bcast-intel.csv", ["--max-depth", "3", "--no-defer"]),
}
# (tree name, target, output name): every target whose MPI the tree is of
EMITS = [("openmpi-bcast", t, n) for t, n in (
    ("c", "c"), ("c-fast", "c-fast"), ("ompi-dec-fixed", "ompi_bcast_intra_dec_fixed.c"),
    ("blob", "bcast.bin"), ("c-array", "bcast_tree.c"), ("ompi-rules", "rules.conf"),
    ("ompi-json", "rules.json"))]
EMITS += [("mpich-bcast", "mpich-json", "mpich_selection.json"),
          ("intel-bcast", "intel-json", "intel_tuning.json")]


def _run(*argv):
    assert cli.main([str(a) for a in argv]) == 0, argv


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    out = tmp_path_factory.mktemp("golden-trees")
    for name, (table, flags) in TREES.items():
        _run("build", REPO / table, *flags, "--out", out / name)
    return out


def _files(path):
    """{relative name: bytes} of a file or of a directory's files."""
    if path.is_file():
        return {path.name: path.read_bytes()}
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file()}


@pytest.mark.parametrize("tree_name,target,name", EMITS, ids=[e[1] for e in EMITS])
def test_emitted_files_are_the_committed_ones(trees, tmp_path, tree_name, target, name):
    out = tmp_path / name
    _run("emit", "--target", target, "--out", out, trees / tree_name / "tree.json")
    golden = GOLDEN / tree_name / name
    if REGEN:
        for rel, data in _files(out).items():
            dest = golden / rel if out.is_dir() else golden
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
    assert golden.exists(), f"{golden} missing: run `make golden`"
    got, want = _files(out), _files(golden)
    assert got.keys() == want.keys()
    for rel in got:
        assert got[rel] == want[rel], (
            f"{golden / rel if out.is_dir() else golden} differs from what `collsel emit "
            f"--target {target}` writes now; if the change is intended, `make golden` and "
            "review the diff")
