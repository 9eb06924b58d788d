"""`--target ompi-dec-fixed` for each of the 14 collectives, by structure (fast; compiling it
into Open MPI 4.1.4 and running it is tests/integration/test_dec_fixed_all.py): the definition
splice.py replaces, with 4.1.4's parameter types (checked against coll_base_functions.h when the
patched build's source is unpacked), the original it defers to, *_do_this with the arguments
4.1.4 takes, non-commutative operations deferred, two_proc guarded, and refusals in one line."""
import copy
import json
import pathlib
import re
import sys

import pytest

from collsel.core.mpi import algorithms
from collsel.core.trees import treefile
from collsel.errors import InputError
from collsel.sinks.emit import ompi_dec_fixed
from defer_tree import document
from helpers import collsel

REPO = pathlib.Path(__file__).resolve().parents[4]
sys.path.insert(0, str(REPO / "mpi-builds" / "ompi-patched"))
import splice  # noqa: E402

HEADER = REPO / "build/ompi-patched/src/ompi/mca/coll/base/coll_base_functions.h"
MACRO = {"allgather": "ALLGATHER", "allgatherv": "ALLGATHERV", "allreduce": "ALLREDUCE",
         "alltoall": "ALLTOALL", "alltoallv": "ALLTOALLV", "barrier": "BARRIER",
         "bcast": "BCAST", "exscan": "EXSCAN", "gather": "GATHER", "reduce": "REDUCE",
         "reduce_scatter": "REDUCESCATTER", "reduce_scatter_block": "REDUCESCATTERBLOCK",
         "scan": "SCAN", "scatter": "SCATTER"}
# *_do_this's parameters after the collective's own (coll_tuned.h of 4.1.4)
DO_THIS_EXTRA = {"alltoall": 4, "reduce": 4, "alltoallv": 1, "scan": 1, "exscan": 1}


def tree_document(collective, algs=(1, 2)):
    """defer_tree's two-level tree (defer in two blocks) with the collective's algorithms."""
    doc = copy.deepcopy(document("bcast"))
    doc["collective"] = collective
    for method, alg in zip(doc["methods"][1:], algs):
        method.update(algorithm=alg, segsize=0, faninout=0,
                      name=algorithms.describe(collective, algorithms.Method(alg, 0, 0)))
    return doc


def tree(collective, algs=(1, 2)):
    return treefile.LoadedTree(tree_document(collective, algs), f"{collective}.json")


def emitted(collective, algs=(1, 2)):
    files = ompi_dec_fixed.emit(tree(collective, algs))
    assert list(files) == [f"ompi_{collective}_intra_dec_fixed.c"]
    return next(iter(files.values()))


def params(code, name):
    """[(type, name)] of the first declaration or definition of `name` in code."""
    start = code.index(name + "(") + len(name) + 1
    text = code[start:code.index(")", start)]
    out = []
    for p in " ".join(text.split()).split(", "):
        m = re.fullmatch(r"(.*?[\s*])(\w+)(\[\])?", p)
        ptype = m.group(1).strip() + (" *" if m.group(3) else "")
        out.append((re.sub(r"\s*\*\s*", " *", ptype).strip(), m.group(2)))
    return out


def test_all_14_collectives_have_a_spec():
    assert sorted(ompi_dec_fixed.SPECS) == sorted(algorithms.TUNED_ALGORITHMS)


@pytest.mark.parametrize("collective", sorted(ompi_dec_fixed.SPECS))
def test_the_function_splice_replaces_and_what_it_calls(collective):
    code = emitted(collective)
    name = f"ompi_coll_tuned_{collective}_intra_dec_fixed"
    assert len(splice.definitions(code, name)) == 1
    original = f"collsel_ompi_original_{collective}_intra_dec_fixed"
    assert not splice.definitions(code, original)                  # declared, not defined
    own = params(code, name)
    assert params(code, original) == own
    names = ", ".join(n for _, n in own)
    assert f"return {original}({names});" in code                    # defer: the original
    call = re.search(rf"return ompi_coll_tuned_{collective}_intra_do_this\(([^;]*)\);", code)
    args = [a.strip() for a in call.group(1).split(",")]
    assert args[:len(own)] == [n for _, n in own]
    assert args[len(own)] == "alg"
    assert len(args) - len(own) == DO_THIS_EXTRA.get(collective, 3)
    assert f"collsel-trace {collective} rank=%d" in code
    if HEADER.is_file():   # the types of 4.1.4's <COLL>_ARGS, in order
        header = HEADER.read_text()
        base = re.search(rf"#define {MACRO[collective]}_BASE_ARGS\s+(.*)", header).group(1)
        want = params(f"f({base}, mca_coll_base_module_t *module)", "f")
        assert [t for t, _ in own] == [t for t, _ in want]


@pytest.mark.parametrize("collective", ["allreduce", "exscan", "reduce_scatter",
                                        "reduce_scatter_block", "scan"])
def test_non_commutative_operations_defer(collective):
    code = emitted(collective)
    assert re.search(r"if \(!ompi_op_is_commute\(op\)\) \{\n.*\n\s+alg = 0;", code)


def test_reduce_keeps_its_non_commutative_ladder():
    code = emitted("reduce")
    assert "alg = collsel_reduce_noncommutative(ompi_comm_size(comm), total_dsize);" in code


@pytest.mark.parametrize("collective", ["bcast", "barrier", "gather", "alltoall"])
def test_collectives_without_an_operation_never_read_one(collective):
    assert "ompi_op_is_commute" not in emitted(collective)


@pytest.mark.parametrize("collective, two", [("allgather", 6), ("allgatherv", 5),
                                             ("alltoall", 5), ("barrier", 5)])
def test_two_proc_defers_at_any_p_but_2_when_the_tree_picks_it(collective, two):
    """The leaf tests P before naming two_proc (the ladder every C target shares); 0 defers to
    Open MPI's original fixed decision."""
    code = emitted(collective, (1, two))
    guard = code.index("if (comm_size != 2) {")
    assert code[guard:].split("\n")[1].strip() == "*segsize = 0; *faninout = 0; return 0;"
    assert f"return {two};" in code[guard:].split("\n")[3]
    assert "comm_size != 2" not in emitted(collective, (1, 2))


@pytest.mark.parametrize("collective, quantity", [
    ("allgather", "total_dsize = dsize * (ptrdiff_t)scount;"),
    ("allgatherv", "total_dsize /= ompi_comm_size(comm);"),
    ("reduce_scatter", "total_dsize += rcounts[i];"),
    ("gather", "if ((ompi_comm_rank(comm) == root) || (MPI_IN_PLACE == sbuf)) {"),
    ("scatter", "if (ompi_comm_rank(comm) == root) {"),
    ("barrier", "total_dsize = 0;"),
    ("alltoallv", "counts = rcounts;"),
])
def test_m_is_the_fixed_decisions_quantity(collective, quantity):
    assert quantity in emitted(collective)


def test_an_algorithm_open_mpi_does_not_have_is_refused(tmp_path):
    doc = copy.deepcopy(document("bcast"))
    doc["collective"] = "allreduce"
    doc["methods"][2].update(algorithm=9, name="nine")
    path = tmp_path / "tree.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "out.c"
    r = collsel("emit", path, "--target", "ompi-dec-fixed", "--out", out)
    assert r.returncode == 2
    assert r.stderr == (f"collsel: error: {path}: methods[2].algorithm: 9 is not one of "
                        "[0, 1, 2, 3, 4, 5, 6]\n")     # core.trees.treefile, for every target
    assert not out.exists()


def test_a_collective_without_a_fixed_decision_is_refused():
    with pytest.raises(InputError, match="no Open MPI dec_fixed for gatherv"):
        ompi_dec_fixed.spec("gatherv")


def test_the_command_writes_an_allgatherv_function(tmp_path):
    path = tmp_path / "tree.json"
    path.write_text(json.dumps(tree_document("allgatherv")))
    out = tmp_path / "out.c"
    r = collsel("emit", path, "--target", "ompi-dec-fixed", "--out", out)
    assert r.returncode == 0, r.stderr
    assert "defer to Open MPI's default on" in r.stderr + r.stdout
    assert "int ompi_coll_tuned_allgatherv_intra_dec_fixed(const void *sbuf" in out.read_text()


def test_an_allreduce_tree_on_ppn_is_refused(tmp_path):
    """The generated function counts a communicator's nodes with an allreduce on it: an
    allreduce deciding on ppn would wait for itself."""
    rows = ["collective,comm_size,msg_size,algorithm,segsize,time_us,ppn"]
    rows += [f"allreduce,{p},{m},{a},0,{1 + a * (z == 1)},{z}"
             for z in (1, 2) for p in (2, 4) for m in (1, 1024) for a in (1, 3)]
    (tmp_path / "z.csv").write_text("\n".join(rows) + "\n")
    r = collsel("build", tmp_path / "z.csv", "--collective", "allreduce", "--z", "ppn",
                "--out", tmp_path / "zt")
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out.c"
    r = collsel("emit", "--target", "ompi-dec-fixed", tmp_path / "zt" / "tree.json", "--out", out)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert r.stderr.startswith("collsel: error: --target ompi-dec-fixed: an allreduce tree "
                               "cannot split on ppn")
    assert not out.exists()
