"""--target intel-json: Intel MPI's I_MPI_TUNING JSON file (what Intel MPI 2021.18.1 reads:
inclusive upper bounds on comm_size and msg_size, -1 open-ended, `<COLL>=<preset>` leaves)."""
import json

from collsel.core.mpi import intel_algorithms
from test_intel import run, tree

ANY_PPN = "ppn=-1"


def emit(capsys, tmp_path, *trees, name="tuning.json"):
    out = tmp_path / name
    status, printed, err = run(capsys, "emit", "--target", "intel-json", *trees, "--out", out)
    return status, printed + err, out


def refused(capsys, tmp_path, *trees):
    status, err, out = emit(capsys, tmp_path, *trees, name="refused.json")
    assert status == 2 and err.count("\n") == 1 and err.startswith("collsel: error: "), err
    assert not out.exists()
    return err


def ranges(*pairs):
    """{comm_size=..: {comm_id=-1: {msg_size=..: {leaf: {}}}}} of [(p bound, [(m bound, leaf)])]."""
    return {f"comm_size={p}": {"comm_id=-1": {f"msg_size={m}": {leaf: {}} for m, leaf in sizes}}
            for p, sizes in pairs}


def preset(capsys, tree_path, p, m):
    """The preset `collsel query` picks at (P, m)."""
    status, out, err = run(capsys, "query", tree_path, "--comm-size", p, "--msg-size", m,
                           "--ids")
    assert status == 0, err
    return int(out.split()[0])


def test_a_tree_of_p_and_m_keeps_both_axes(tmp_path, capsys):
    """The tree intel-env refuses: the m cut (23171, between 8192 and 65536) is written as the
    inclusive bound 23170 under each P range, the P cut 4 as comm_size=3, the last ones -1."""
    path = tree(tmp_path, capsys, lambda p, m: 1 if (p < 4) == (m < 65536) else 3)
    status, notes, out = emit(capsys, tmp_path, path)
    assert status == 0, notes
    assert json.loads(out.read_text()) == {"coll=Bcast": {ANY_PPN: ranges(
        (3, [(23170, "BCAST=1"), (-1, "BCAST=3")]),
        (-1, [(23170, "BCAST=3"), (-1, "BCAST=1")]))}}
    # the bounds are the tree's cuts: what query decides on each side of them
    assert [preset(capsys, path, 3, m) for m in (23170, 23171)] == [1, 3]
    assert [preset(capsys, path, 4, m) for m in (23170, 23171)] == [3, 1]
    assert "traced" not in notes   # bcast's msg_size meaning was traced


def test_one_axis_trees_and_several_collectives_in_one_file(tmp_path, capsys):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    bcast = tree(tmp_path / "a", capsys, lambda p, m: 1 if m < 65536 else 3)
    allreduce = tree(tmp_path / "b", capsys, lambda p, m: 1 if p < 4 else 3, "allreduce")
    status, notes, out = emit(capsys, tmp_path, bcast, allreduce)
    assert status == 0, notes
    assert json.loads(out.read_text()) == {
        "coll=Bcast": {ANY_PPN: ranges((-1, [(23170, "BCAST=1"), (-1, "BCAST=3")]))},
        "coll=Allreduce": {ANY_PPN: ranges((3, [(-1, "ALLREDUCE=1")]),
                                         (-1, [(-1, "ALLREDUCE=3")]))}}
    err = refused(capsys, tmp_path, bcast, allreduce, bcast)
    assert "a second bcast tree (one per collective)" in err


def test_tuning_file_keys_are_mpi_function_names():
    assert intel_algorithms.tuning_file_keys("bcast") == ("coll=Bcast", "BCAST")
    assert intel_algorithms.tuning_file_keys("reduce_scatter_block") == (
        "coll=Reduce_scatter_block", "REDUCE_SCATTER_BLOCK")


def test_untraced_collective_says_so(tmp_path, capsys):
    path = tree(tmp_path, capsys, lambda p, m: 1 if m < 65536 else 3, "reduce")
    status, notes, out = emit(capsys, tmp_path, path)
    assert status == 0, notes
    assert "coll=Reduce" in json.loads(out.read_text())
    assert "traced for bcast and allreduce only" in notes


def test_a_tree_deferring_in_some_cells_is_refused(tmp_path, capsys):
    path = tree(tmp_path, capsys, lambda p, m: 0 if (p, m) == (4, 1048576) else 1)
    err = refused(capsys, tmp_path, path)
    assert "defers to Intel MPI's default at P = 4, m = 1048576 B" in err
    assert "rebuild with --no-defer" in err


def test_a_tree_deferring_everywhere_is_left_out(tmp_path, capsys):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    everywhere = tree(tmp_path / "a", capsys, lambda p, m: 0)
    allreduce = tree(tmp_path / "b", capsys, lambda p, m: 3, "allreduce")
    status, notes, out = emit(capsys, tmp_path, everywhere, allreduce)
    assert status == 0, notes
    assert list(json.loads(out.read_text())) == ["coll=Allreduce"]
    assert "bcast: the tree defers everywhere: left out of the file" in notes
    err = refused(capsys, tmp_path, everywhere)
    assert "nothing to override (run Intel MPI without I_MPI_TUNING)" in err


def test_beyond_keeps_the_last_p_range_open(tmp_path, capsys):
    path = tree(tmp_path, capsys, lambda p, m: 1 if (p < 4) == (m < 65536) else 3)
    doc = json.loads(path.read_text())
    path.write_text(json.dumps({**doc, "beyond": {"above": 4, "method": "defer"}}))
    status, notes, out = emit(capsys, tmp_path, path)
    assert status == 0, notes
    assert "comm_size=-1" in json.loads(out.read_text())["coll=Bcast"][ANY_PPN]
    assert "cannot defer past P = 4 (tree.json `beyond`)" in notes


def test_a_size_cut_past_a_c_int_is_refused(tmp_path, capsys):
    table = tmp_path / "big.csv"
    rows = [f"bcast,{p},{m},{alg},0,{1 if alg == (1 if m < 2**31 else 3) else 2}"
            for p in (2, 4) for m in (2**30, 2**33) for alg in (1, 3)]
    table.write_text("# algorithm_family=intel\n"
                     "collective,comm_size,msg_size,algorithm,segsize,time_us\n"
                     + "\n".join(rows) + "\n")
    status, _, err = run(capsys, "build", table, "--collective", "bcast", "--out",
                         tmp_path / "big")
    assert status == 0, err
    err = refused(capsys, tmp_path, tmp_path / "big" / "tree.json")
    assert "msg_size cut" in err and "Intel MPI parses message sizes as C ints" in err


def test_an_open_mpi_tree_is_refused(tmp_path, capsys):
    ompi = tmp_path / "o.csv"
    ompi.write_text("collective,comm_size,msg_size,algorithm,segsize,time_us\n"
                    "bcast,2,8,6,0,1\nbcast,2,8,8,0,2\nbcast,4,65536,6,0,9\nbcast,4,65536,8,0,3\n")
    status, _, err = run(capsys, "build", ompi, "--collective", "bcast", "--out", tmp_path / "o")
    assert status == 0, err
    err = refused(capsys, tmp_path, tmp_path / "o" / "tree.json")
    assert "--target intel-json writes Intel MPI presets (an I_MPI_TUNING file)" in err
    assert "algorithm_family openmpi" in err
