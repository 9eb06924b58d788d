"""What every emit target makes of a leaf that defers to the MPI (algorithm 0, issue 17 item 4).

The tree (tests/defer_tree.py) is hand-made: two of its four blocks defer. Each target is checked
at every grid value, cut and cut - 1 and random points against the tree (`LoadedTree.decide`):
- c, c-fast: the compiled decision function returns 0 ("no override", documented in decision.h);
- ompi-dec-fixed: spliced into a stub of coll_tuned_decision_fixed.c by splice.py, the generated
  function calls Open MPI's original dec_fixed (renamed collsel_ompi_original_*) in the defer
  region and *_do_this only with the tree's other algorithms (never 0: that would recurse);
- ompi-rules / ompi-json: rule algorithm 0 there, read back as Open MPI reads it;
- blob: the C runtime returns algorithm 0 (tests/runtime checks every point too).
Every target's notes name the defer region. Real Open MPI: tests/integration/test_ompi_rules_in_ompi.py
and test_ompi_patched.py.
"""
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from collsel.core.trees import treefile
from collsel.sinks.emit import ompi_rules, ompi_rules_reader, targets

import defer_tree
from helpers import CFLAGS, DRIVER, query_points

REPO = pathlib.Path(__file__).resolve().parents[4]
SPLICE = REPO / "mpi-builds" / "ompi-patched" / "splice.py"
INT_MAX = 2**31 - 1
DEFER_CELLS = "defer to {mpi}'s default on 22 of 44 grid cells"


@pytest.fixture(params=["bcast", "reduce"])
def tree(request, tmp_path):
    return treefile.load(defer_tree.write(tmp_path / "tree.json", request.param))


def points(loaded, n_random=3000, int_count=False):
    """[(P, m)] over cuts, cut - 1, extremes and random points; m <= INT_MAX for an int count."""
    doc = {"axes": [{"values": a.values, "cuts": a.cuts} for a in loaded.axes]}
    pts = [(p, m) for p, m in query_points(doc, n_random)
           if p <= INT_MAX and (not int_count or m <= INT_MAX)]
    assert len(pts) > n_random // 2
    return pts


def expected(loaded, pts):
    """'alg segsize faninout' per point, as the tree decides; the hand-made rule agrees."""
    idx = loaded.decide([[p for p, _ in pts], [m for _, m in pts]]).tolist()
    out = [loaded.methods[i] for i in idx]
    assert [(m.algorithm, m.segsize, m.faninout) for m in out] == [
        defer_tree.expected(loaded.collective, p, m) for p, m in pts]
    return [f"{m.algorithm} {m.segsize} {m.faninout}" for m in out]


def emit(target, loaded):
    return targets.emit(target, [loaded], targets.EmitOptions(prefix="t"))


def write(files, directory):
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (directory / name).write_bytes(content if isinstance(content, bytes) else
                                       content.encode())
    return directory


def run(exe, pts):
    text = "".join(f"{p} {m}\n" for p, m in pts)
    return subprocess.run([str(exe)], input=text, capture_output=True, text=True,
                          check=True).stdout.splitlines()


@pytest.mark.parametrize("target", ["c", "c-fast"])
def test_c_returns_algorithm_0_for_no_override(tree, target, tmp_path):
    result = emit(target, tree)
    out = write(result.files, tmp_path / target)
    header = (out / "decision.h").read_text()
    assert 'Algorithm 0 means "no override"' in header and "22 of the\n * tree's 44" in header
    exe = out / "decide"
    subprocess.run(["gcc", *CFLAGS, "-DDECIDE=t_decide", f"-I{out}", str(DRIVER),
                    str(out / "decision.c"), "-o", str(exe)], check=True)
    pts = points(tree)
    got, want = run(exe, pts), expected(tree, pts)
    assert got == want
    assert sum(w == "0 0 0" for w in want) > len(want) // 4      # the defer region is exercised
    assert [n for n in result.notes if DEFER_CELLS.format(mpi="the MPI") in n] == result.notes
    assert "no override" in result.notes[0]


# A stub of Open MPI's coll_tuned_decision_fixed.c: the types and calls the generated function
# uses, an "original" dec_fixed that says it ran, and a driver reading "P m" lines.
STUB = r"""
#include <stdio.h>
#include <stddef.h>
struct ompi_datatype_t { size_t size; };
struct ompi_communicator_t { int size; };
struct ompi_op_t { int commute; };
typedef struct mca_coll_base_module_t mca_coll_base_module_t;
static int ompi_datatype_type_size(struct ompi_datatype_t *d, size_t *s) { *s = d->size; return 0; }
static int ompi_comm_size(struct ompi_communicator_t *c) { return c->size; }
static int ompi_comm_rank(struct ompi_communicator_t *c) { (void)c; return 0; }
static int ompi_op_is_commute(struct ompi_op_t *op) { return op->commute; }
int ompi_coll_tuned_bcast_intra_do_this(void *b, int n, struct ompi_datatype_t *d, int root,
        struct ompi_communicator_t *c, mca_coll_base_module_t *m, int alg, int fan, int seg)
{ (void)b; (void)n; (void)d; (void)root; (void)c; (void)m;
  printf("%d %d %d\n", alg, seg, fan); return 0; }
int ompi_coll_tuned_reduce_intra_do_this(const void *s, void *r, int n, struct ompi_datatype_t *d,
        struct ompi_op_t *op, int root, struct ompi_communicator_t *c, mca_coll_base_module_t *m,
        int alg, int fan, int seg, int reqs)
{ (void)s; (void)r; (void)n; (void)d; (void)op; (void)root; (void)c; (void)m; (void)reqs;
  printf("%d %d %d\n", alg, seg, fan); return 0; }

int ompi_coll_tuned_bcast_intra_dec_fixed(void *buff, int count,
                                          struct ompi_datatype_t *datatype, int root,
                                          struct ompi_communicator_t *comm,
                                          mca_coll_base_module_t *module)
{
    (void)buff; (void)count; (void)datatype; (void)root; (void)comm; (void)module;
    printf("original\n");
    return 0;
}

int ompi_coll_tuned_reduce_intra_dec_fixed(const void *sendbuf, void *recvbuf, int count,
                                           struct ompi_datatype_t *datatype,
                                           struct ompi_op_t *op, int root,
                                           struct ompi_communicator_t *comm,
                                           mca_coll_base_module_t *module)
{
    (void)sendbuf; (void)recvbuf; (void)count; (void)datatype; (void)op; (void)root;
    (void)comm; (void)module;
    printf("original\n");
    return 0;
}

int main(void)
{
    int p, count;
    struct ompi_datatype_t byte = {1};
    struct ompi_op_t sum = {1};
    while (scanf("%d %d", &p, &count) == 2) {
        struct ompi_communicator_t comm = {p};
        if (COLL == 0)
            ompi_coll_tuned_bcast_intra_dec_fixed(NULL, count, &byte, 0, &comm, NULL);
        else
            ompi_coll_tuned_reduce_intra_dec_fixed(NULL, NULL, count, &byte, &sum, 0, &comm, NULL);
    }
    return 0;
}
"""


def spliced_dec_fixed(result, coll, tmp_path):
    """The emitted dec_fixed spliced into STUB by splice.py and compiled: the program."""
    (name, _), = result.files.items()
    generated = write(result.files, tmp_path)
    original = tmp_path / "coll_tuned_decision_fixed.c.orig"
    original.write_text(STUB)
    spliced = tmp_path / "coll_tuned_decision_fixed.c"
    r = subprocess.run([sys.executable, str(SPLICE), str(original), str(spliced),
                        f"ompi_coll_tuned_{coll}_intra_dec_fixed={generated / name}"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    exe = tmp_path / "dec_fixed"
    subprocess.run(["gcc", *CFLAGS, "-Wno-unused-function", f"-DCOLL={int(coll == 'reduce')}",
                    str(spliced), "-o", str(exe)], check=True)
    return exe


def test_dec_fixed_calls_open_mpis_original_where_it_defers(tree, tmp_path):
    coll = tree.collective
    result = emit("ompi-dec-fixed", tree)
    (_, code), = result.files.items()
    exe = spliced_dec_fixed(result, coll, tmp_path)
    pts = points(tree, int_count=True)
    want = ["original" if w == "0 0 0" else w for w in expected(tree, pts)]
    assert run(exe, pts) == want
    assert "original" in want and len(set(want)) == 3
    assert coll == "bcast" or "alg != 0 && alg != 1 && alg != 6" in code
    assert [n for n in result.notes if DEFER_CELLS.format(mpi="Open MPI") in n] == result.notes
    assert "original fixed decision" in result.notes[0]


def test_rules_files_write_algorithm_0_and_read_back_as_the_fixed_decision(tree):
    coll_id = ompi_rules_reader.COLLECTIVE_IDS[tree.collective]
    pts = points(tree)
    want = expected(tree, pts)
    classic = emit("ompi-rules", tree)
    rules = ompi_rules_reader.read("rules.conf", classic.files["rules.conf"].encode(), (4, 1, 4))
    assert not rules.errors
    got = [" ".join(map(str, rules.lookup(coll_id, p, m)[:3])) for p, m in pts]
    assert got == want
    text = classic.files["rules.conf"]
    assert "ALG 0 defers to Open MPI" in text
    assert " 0 0 0  # m 0..2047: defer: no override, the MPI's own decision" in text
    as_json = emit("ompi-json", tree)
    document = __import__("json").loads(as_json.files["rules.json"])
    got = [" ".join(map(str, ompi_rules.json_lookup(document, tree.collective, p, m)))
           for p, m in pts]
    assert got == want
    for result in (classic, as_json):
        assert "decides differently from the tree on 0 of 44" in result.notes[0]
        assert DEFER_CELLS.format(mpi="Open MPI") in result.notes[1]
        assert "rule algorithm 0: coll/tuned runs its fixed decision" in result.notes[1]


@pytest.fixture(scope="module")
def query_tree(tmp_path_factory):
    exe = tmp_path_factory.mktemp("runtime") / "query_tree"
    subprocess.run(["gcc", *CFLAGS, f"-I{REPO / 'include'}",
                    str(REPO / "runtime" / "examples" / "query_tree.c"),
                    str(REPO / "runtime" / "collsel_tree.c"), "-o", str(exe)], check=True)
    return exe


def test_blob_answers_algorithm_0_no_override(tree, query_tree, tmp_path):
    result = emit("blob", tree)
    blob = write(result.files, tmp_path) / "tree.bin"
    rng = np.random.default_rng(3)
    pts = points(tree)
    pts = [pts[i] for i in rng.choice(len(pts), 40, replace=False)] + [(2, 0), (8, 2**64 - 1)]
    got = [subprocess.run([str(query_tree), str(blob), str(p), str(m)], capture_output=True,
                          text=True, check=True).stdout.strip() for p, m in pts]
    want = expected(tree, pts)
    assert got == want and "0 0 0" in want
    assert DEFER_CELLS.format(mpi="the MPI") in result.notes[0]
    assert "algorithm 0 = no override" in result.notes[0]


def test_a_tree_that_never_defers_has_no_defer_note(tmp_path):
    doc = defer_tree.document("bcast")
    doc["methods"][0].update(algorithm=7, name="knomial")
    path = tmp_path / "tree.json"
    path.write_text(__import__("json").dumps(doc))
    loaded = treefile.load(path)
    for target in ("c", "ompi-dec-fixed", "blob"):
        assert not [n for n in emit(target, loaded).notes if "defer" in n]
    assert len(emit("ompi-rules", loaded).notes) == 1
