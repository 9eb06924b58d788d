"""Hierarchical methods under libcollsel (issue 21 items 1 and 4), local machine, Open MPI 4.1:
a hand-made tree (speed/libcollsel/make_tree.py hier: P <= 5, m >= 2048 -> hier:2:linear:linear)
emitted as a format-2 blob; the unmodified programs coll_check.c and libcollsel_cases.c under
LD_PRELOAD decide as `collsel query` (trace), compute correct results over roots (leaders and
not), datatypes, ops and MPI_IN_PLACE, and free the group and leader communicators with the
user's (counts back to their level after 1,000 communicators). MPICH refuses the Open MPI tree
by its family byte. A pathological tree (make_tree.py patho: 64-byte segments at m >= 2048) is
timed against the MPI's default on the same sizes: printed, not asserted (no timed assertions;
bench-data/hier/measure.sh records the figure)."""
import pathlib
import re
import shutil
import sys

import pytest

from test_libcollsel import (BIN, DECISION, DYNAMIC_RULES, PASSING, counts_of, launch,
                             our_records, query, run)

REPO = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent
MAKE_TREE = REPO / "speed" / "libcollsel" / "make_tree.py"
SIZES = (1024, 4096, 65536)          # both sides of the tree's m split at 2048


def make_trees(kind, directory):
    directory.mkdir(parents=True, exist_ok=True)
    for c in ("bcast", "reduce"):
        run([sys.executable, MAKE_TREE, kind, c, directory / f"{c}.json"])
        run(["collsel", "emit", "--target", "blob", directory / f"{c}.json", "--out",
             directory / f"{c}.bin"])
    return directory


@pytest.fixture(scope="module")
def setup():
    run(["make", "-s", "-C", REPO, "libcollsel"])
    BIN.mkdir(parents=True, exist_ok=True)
    out = {"lib": {f: REPO / "build" / "libcollsel" / f / "libcollsel.so"
                   for f in ("openmpi", "mpich")}}
    flags = ["-O2", "-std=c99", "-Wall", "-Wextra", "-Werror"]
    for f in ("openmpi", "mpich"):
        out[f"coll_check-{f}"] = BIN / f"hier-coll_check-{f}"
        run([f"mpicc.{f}", *flags, HERE / "coll_check.c", "-o", out[f"coll_check-{f}"]])
    out["cases"] = BIN / "hier-libcollsel_cases"
    run(["mpicc.openmpi", *flags, "-I", REPO / "include", HERE / "libcollsel_cases.c", "-o",
         out["cases"], "-ldl"])
    out["coll_time"] = BIN / "hier-coll_time"
    run(["mpicc.openmpi", *flags, REPO / "speed" / "libcollsel" / "coll_time.c", "-o",
         out["coll_time"]])
    out["hier"] = make_trees("hier", BIN / "trees-hier")
    out["patho"] = make_trees("patho", BIN / "trees-patho")
    return out


def test_blob_is_format_2_with_hierarchical_records(setup):
    blob = (setup["hier"] / "reduce.bin").read_bytes()
    assert blob[4] == 2 and blob[14] == 0             # format 2, Open MPI family
    assert b"\x02\x00\x01\x01" in blob                # groups 2, inner 1, outer 1


@pytest.mark.parametrize("collective", ("bcast", "reduce"))
def test_hierarchical_decisions_run_and_are_correct(collective, setup):
    env = {"COLLSEL_TREES": setup["hier"], "COLLSEL_TRACE": "1"}
    for p in (2, 3, 4, 5):
        done = launch("openmpi", p, [setup["coll_check-openmpi"], collective, *SIZES], env,
                      (setup["lib"]["openmpi"],), DYNAMIC_RULES)
        assert [x for x in done.stdout.splitlines() if x.startswith("check ")] == \
            [f"check {collective} m={m} ok" for m in SIZES], done.stdout
        decided = {}
        for line in done.stderr.splitlines():
            d = DECISION.match(line)
            if d and d.group(1) == collective:
                decided.setdefault(int(d.group(4)), set()).add(tuple(map(int, d.groups()[5:])))
        want = query(setup["hier"] / f"{collective}.json", [(p, m) for m in SIZES])
        assert decided == {m: {w} for m, w in zip(SIZES, want)}, (p, decided, want)
        assert {w[0] for w in want} == {0, 1000211}          # a hierarchical region is served


def test_roots_types_ops_and_communicators_freed(setup):
    done = launch("openmpi", 5, [setup["cases"], 1000], {"COLLSEL_TREES": setup["hier"]},
                  (setup["lib"]["openmpi"],), DYNAMIC_RULES)
    cases = re.findall(r"^case (\S+) (\S+)$", done.stdout, re.M)
    assert len(cases) == 19 and all(r == "ok" for _, r in cases), done.stdout
    counts = counts_of(done.stdout)
    before, after = counts["before"], counts["after"]
    # per communicator of P = 5, its one bcast and one reduce each make the method they use, at
    # its first use: a hierarchical one a group and a leader communicator and a linear shadow of
    # each (4 on a leader such as rank 0), a flat one its shadow, a deferred one nothing
    made = int(after["shadows_made"]) - int(before["shadows_made"])
    assert 0 < made <= 1000 * 2 * 4, made
    assert (after["shadows_live"], after["states_live"], after["state_bytes"]) == \
        (before["shadows_live"], before["states_live"], before["state_bytes"]), counts


def test_mpich_refuses_an_open_mpi_tree_by_its_family(setup):
    done = launch("mpich", 2, [setup["coll_check-mpich"], "bcast", 1, 5000],
                  {"COLLSEL_TREES": setup["hier"], "COLLSEL_TRACE": "1"},
                  (setup["lib"]["mpich"],))
    lines = [x for x in done.stderr.splitlines() if x.startswith("libcollsel:")]
    assert lines == ["libcollsel: the bcast tree holds Open MPI algorithm ids, this library "
                     "serves MPICH" + PASSING], done.stderr


@pytest.mark.timing
def test_pathological_tree_timed(setup):
    """Printed: the pathological decision against the MPI's default (no library) at P = 4."""
    out = []
    for c in ("bcast", "reduce"):
        args = [setup["coll_time"], c, 5, 1024, 1 << 20]
        with_lib = launch("openmpi", 4, args, {"COLLSEL_TREES": setup["patho"]},
                          (setup["lib"]["openmpi"],), DYNAMIC_RULES)
        alone = launch("openmpi", 4, args, {}, (), DYNAMIC_RULES)
        out += [f"patho {with_lib.stdout.strip()}", f"default {alone.stdout.strip()}"]
    print("\n".join(out))


def test_valgrind_finds_nothing_of_ours_in_hierarchical_methods(setup, tmp_path):
    """libcollsel_cases at P = 3 under the hierarchical tree (roots leader and not, reduce's
    temporary buffers, 50 communicators' group and leader communicators) under memcheck."""
    if not shutil.which("valgrind"):
        pytest.skip("valgrind is not installed")
    logs = tmp_path / "vg.%p.log"
    done = launch("openmpi", 3, ["valgrind", "--trace-children=yes", "--leak-check=full",
                                 "--show-leak-kinds=definite,indirect,possible",
                                 "--num-callers=40", f"--log-file={logs}", "env",
                                 f"LD_PRELOAD={setup['lib']['openmpi']}", setup["cases"], 50],
                  {"COLLSEL_TREES": setup["hier"]}, (), DYNAMIC_RULES)
    assert "case communicators-50 ok" in done.stdout, done.stdout
    ran = [t for t in (p.read_text() for p in tmp_path.glob("vg.*.log"))
           if "libcollsel" in t and "libcollsel.so" in t]
    assert len(ran) == 3, len(ran)
    ours = [r for t in ran for r in our_records(t)]
    assert not ours, "\n\n".join(ours[:3])
