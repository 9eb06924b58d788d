"""(c) MPICH 5.0.2 (build/mpis/mpich5, `make setup-mpis`) runs the 5.0-only algorithm a tree
chooses, through `collsel emit --target mpich-json` on 5.0.2's own base (build/mpich5/
generic.json, `make mpich5-base`).

A table where allreduce `tree` (an algorithm 4.0.2 lacks) is fastest everywhere gives a tree
whose file selects MPIR_Allreduce_intra_tree with MPICH's default parameters. The trace: with
MPIR_CVAR_COLL_TREE_DUMP=1, MPICH's tree algorithms announce the tree they build ("tree_type=1:
dumping colltree<rank>.json"; knomial_1, MPICH's default tree type, is 1), the others print
nothing (libmpi keeps no symbol table, so there is no function to break on). Under the `tree`
file every rank announces its tree, under the same table choosing `ring` none does, and both
give correct sums at P = 2, 3, 4; the `tree` file on 4.0.2's base is refused.
"""
import os
import pathlib
import subprocess
import sys

import pytest

from mpich_walk import mpich_table

REPO = pathlib.Path(__file__).resolve().parents[2]
HOME = pathlib.Path(os.environ.get("COLLSEL_MPICH_HOME", REPO / "build" / "mpis" / "mpich5"))
BASE = pathlib.Path(os.environ.get("COLLSEL_MPICH_BASE",
                                   REPO / "build" / "mpich5" / "generic.json"))
PROGRAM = pathlib.Path(__file__).with_name("mpich_allreduce_check.c")
SIZES = (8, 1000, 65536)
DUMP = "tree_type=1: dumping colltree"

pytestmark = pytest.mark.skipif(not (HOME / "bin" / "mpichversion").exists(),
                                reason="no MPICH 5 in build/mpis/mpich5 (make setup-mpis)")


def collsel(*args):
    done = subprocess.run([sys.executable, "-m", "collsel.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=300)
    return done


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    if not BASE.exists():
        pytest.fail(f"{BASE} missing: run `make mpich5-base`")
    d = tmp_path_factory.mktemp("mpich5")
    exe = d / "mpich_allreduce_check"
    built = subprocess.run([str(HOME / "bin" / "mpicc"), "-O2", "-Wall", "-Werror", "-o",
                            str(exe), str(PROGRAM)], capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr
    files = {}
    for best in ("tree", "ring"):
        table = d / f"{best}.csv"
        table.write_text(mpich_table("allreduce", lambda i, j, names, b=best: b, (2, 4),
                                     SIZES, release="5.0"))
        assert collsel("build", table, "--collective", "allreduce", "--out",
                       d / best).returncode == 0
        files[best] = d / f"{best}.json"
        done = collsel("emit", "--target", "mpich-json", d / best / "tree.json",
                       "--mpich-base", BASE, "--out", files[best])
        assert done.returncode == 0, done.stderr
    return {"exe": exe, "dir": d, **files}


def run(setup, selection, p):
    env = {**os.environ, "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE": str(setup[selection]),
           "MPIR_CVAR_DEVICE_COLLECTIVES": "none", "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "auto",
           "MPIR_CVAR_COLL_TREE_DUMP": "1"}
    work = setup["dir"] / f"run-{selection}-{p}"      # the dumps are written to the cwd
    work.mkdir(exist_ok=True)
    return subprocess.run(["timeout", "120", str(HOME / "bin" / "mpiexec"), "-n", str(p),
                           str(setup["exe"]), *map(str, SIZES)], env=env, cwd=work,
                          capture_output=True, text=True, timeout=150)


@pytest.mark.parametrize("p", (2, 3, 4))
def test_the_file_runs_the_50_algorithm_it_names(setup, p):
    text = setup["tree"].read_text()
    assert '"algorithm=MPIR_Allreduce_intra_tree"' in text and '"tree_type=knomial_1"' in text
    for selection, traced in (("tree", True), ("ring", False)):
        done = run(setup, selection, p)
        assert done.returncode == 0, f"{selection} P={p}: {done.stdout}\n{done.stderr[-2000:]}"
        checks = [x for x in done.stdout.splitlines() if x.startswith("check ")]
        assert checks == [f"check allreduce m={m} ok" for m in SIZES], done.stdout
        announced = {line.split("colltree")[1] for line in done.stdout.splitlines()
                     + done.stderr.splitlines() if DUMP in line}
        assert announced == ({f"{r}.json" for r in range(p)} if traced else set()), \
            (selection, p, done.stdout, done.stderr)


def test_the_50_file_on_40s_base_is_refused(setup, tmp_path):
    base40 = REPO / "build" / "mpich" / "generic.json"
    if not base40.exists():
        pytest.skip("no MPICH 4.0.2 base (make mpich-base)")
    out = tmp_path / "o.json"
    done = collsel("emit", "--target", "mpich-json", setup["dir"] / "tree" / "tree.json",
                   "--mpich-base", base40, "--out", out)
    assert done.returncode == 2 and not out.exists()
    assert "lacks; pass --mpich-base build/mpich5/generic.json" in done.stderr
