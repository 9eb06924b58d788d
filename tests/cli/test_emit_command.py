"""`collsel emit`: the c and ompi-dec-fixed targets write what `collsel build` writes."""
import subprocess

import pytest


def run(*args):
    return subprocess.run(["collsel", *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory, tanjaderin):
    out = tmp_path_factory.mktemp("emit") / "tree"
    r = run("build", tanjaderin["bcast"], "--collective", "bcast", "--max-depth", "3",
            "--out", str(out))
    assert r.returncode == 0, r.stderr
    return out


def test_c_targets_match_build(built, tmp_path):
    r = run("emit", str(built / "tree.json"), "--target", "c", "--out", str(tmp_path / "c"))
    assert r.returncode == 0, r.stderr
    for name in ("decision.c", "decision.h"):
        assert (tmp_path / "c" / name).read_bytes() == (built / name).read_bytes()
    r = run("emit", str(built / "tree.json"), "--target", "ompi-dec-fixed",
            "--out", str(tmp_path / "d.c"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "d.c").read_bytes() == (built / "ompi_bcast_intra_dec_fixed.c").read_bytes()


def test_bad_tree_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "tree.json"
    bad.write_text('{"format": "collsel-tree", "version": 9}')
    r = run("emit", str(bad), "--target", "c", "--out", str(tmp_path / "o"))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "version 9 unsupported" in r.stderr
    assert not (tmp_path / "o").exists()


def test_out_may_not_be_an_input(built, tmp_path):
    """`--out` naming the tree being read (through another spelling too) would replace it."""
    tree = tmp_path / "tree.json"
    tree.write_bytes((built / "tree.json").read_bytes())
    before = tree.read_bytes()
    for out in (str(tree), str(tmp_path / "." / "tree.json")):
        r = run("emit", str(tree), "--target", "blob", "--out", out)
        assert r.returncode == 2 and r.stderr.count("\n") == 1
        assert "is also an input file" in r.stderr and "choose another --out" in r.stderr
        assert tree.read_bytes() == before
