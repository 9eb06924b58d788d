"""A tree whose leaves pick a hierarchical method (hier:G:INNER:OUTER): only the blob targets
(blob format 2, libcollsel) hold it; every other target refuses it, one line, exit 2, nothing
written, instead of writing its id (1000000 + ...) as an Open MPI algorithm number."""
import pytest

from collsel import cli
from collsel.core.mpi import algorithms
from collsel.sinks.emit.targets import HIERARCHICAL, TARGETS

HIER = algorithms.hier_id("reduce", 2, 1, 1)    # hier:2:linear:linear


class Ran:
    def __init__(self, returncode, stderr):
        self.returncode, self.stderr = returncode, stderr


@pytest.fixture
def run(capsys):
    """`collsel ARGS` in this process (the CLI's own main: exit status and stderr as run)."""
    def _run(*args):
        capsys.readouterr()
        code = cli.main([str(a) for a in args])
        return Ran(code, capsys.readouterr().err)
    return _run


def write_table(path, hier_wins):
    """reduce at P 2, 4, 8 x m 1K, 64K, 1M: linear best, hier best where `hier_wins(P, m)`."""
    rows = ["collective,comm_size,msg_size,algorithm,segsize,time_us"]
    for p in (2, 4, 8):
        for m in (1024, 65536, 1 << 20):
            rows += [f"reduce,{p},{m},0,0,10", f"reduce,{p},{m},1,0,8", f"reduce,{p},{m},2,0,9",
                     f"reduce,{p},{m},{HIER},0,{4 if hier_wins(p, m) else 12}"]
    path.write_text("\n".join(rows) + "\n")


@pytest.fixture
def hier_tree(tmp_path, run):
    write_table(tmp_path / "t.csv", lambda p, m: p == 8 and m == 1 << 20)
    r = run("build", tmp_path / "t.csv", "--collective", "reduce", "--out", tmp_path / "tree")
    assert r.returncode == 0, r.stderr
    return tmp_path / "tree" / "tree.json"


@pytest.mark.parametrize("target", sorted(set(TARGETS) - HIERARCHICAL))
def test_targets_without_hier_refuse_the_tree(hier_tree, tmp_path, run, target):
    out = tmp_path / "out"
    r = run("emit", str(hier_tree), "--target", target, "--out", str(out))
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    assert (f"--target {target} cannot express the hierarchical method hier2/linear/linear "
            f"(algorithm {HIER}) chosen at P >= 7, m >= 262145") in r.stderr
    assert "--target blob" in r.stderr and str(hier_tree) in r.stderr
    assert not out.exists()


@pytest.mark.parametrize("target", sorted(HIERARCHICAL))
def test_blob_targets_take_the_tree(hier_tree, tmp_path, run, target):
    r = run("emit", str(hier_tree), "--target", target, "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out").stat().st_size > 0


def test_hier_measured_but_never_chosen_is_emitted(tmp_path, run):
    write_table(tmp_path / "t.csv", lambda p, m: False)
    r = run("build", str(tmp_path / "t.csv"), "--collective", "reduce", "--out",
            str(tmp_path / "tree"))
    assert r.returncode == 0, r.stderr
    assert str(HIER) in (tmp_path / "tree" / "tree.json").read_text()   # listed, at no leaf
    r = run("emit", str(tmp_path / "tree" / "tree.json"), "--target", "ompi-rules",
            "--out", str(tmp_path / "rules.conf"))
    assert r.returncode == 0, r.stderr


def test_build_writes_no_c_for_a_hierarchical_tree_and_removes_an_earlier_one(tmp_path, run):
    write_table(tmp_path / "t.csv", lambda p, m: False)             # first: a flat tree, with C
    out = tmp_path / "tree"
    assert run("build", tmp_path / "t.csv", "--collective", "reduce", "--out", out).returncode == 0
    c_files = ["decision.c", "decision.h", "ompi_reduce_intra_dec_fixed.c"]
    assert all((out / name).exists() for name in c_files)
    write_table(tmp_path / "t.csv", lambda p, m: p == 8 and m == 1 << 20)
    r = run("build", tmp_path / "t.csv", "--collective", "reduce", "--out", out)
    assert r.returncode == 0, r.stderr
    assert "no C files: tree.json: --target c cannot express the hierarchical method" in r.stderr
    assert not any((out / name).exists() for name in c_files)
    assert str(HIER) in (out / "tree.json").read_text()
