"""From `collsel tune` to a running application (issue "Lean"): the summary names each tree's
methods and says where it defers, scores a deferring tree as the default, one definition of the
default's figure (core.evaluate.headline) in the summary, build's printout and the report; the deploy
lines (absolute, libcollsel built or built first); the blobs where COLLSEL_TREES=DIR finds
them; the report's deploy box pointing at the tune's own files, or at nothing to deploy.

The tune directory is the shipped bench-data/cluster-colls/tune-salloc (a real 13-collective
tune), copied: allreduce's tree defers everywhere there, barrier's is one method.
"""
import json
import os
import re
import shutil
import subprocess

import pytest

from collsel.pipeline.tune import summary as tune_summary
from collsel.core.evaluate import headline
from collsel.core.mpi import algorithms, method_text
from collsel.sinks.emit import deploy
from collsel.pipeline.tune import layout, plan as tune_plan

from helpers import REPO, collsel
from test_sweep import one_error_line

SALLOC = REPO / "bench-data" / "cluster-colls" / "tune-salloc"


def tune_dir(tmp_path, collectives=("allreduce", "barrier", "bcast")):
    """A tune directory of `collectives` from the shipped salloc tune, in the current layout
    (blobs in DIR/trees/)."""
    out = tmp_path / "tune"
    plan = json.loads((SALLOC / layout.PLAN).read_text())
    plan["grids"] = [g for g in plan["grids"] if g["collective"] in collectives]
    plan["collectives"] = [g["collective"] for g in plan["grids"]]
    out.mkdir()
    (out / layout.PLAN).write_text(json.dumps(plan))
    plan = tune_plan.TunePlan.from_json(plan)
    shutil.copy(SALLOC / layout.RULES, out / layout.RULES)
    (out / layout.BLOBS).mkdir()
    for c in collectives:
        shutil.copytree(SALLOC / c / "tree", out / c / "tree")
        for name in ("table.csv", "table.csv.launches"):
            shutil.copy(SALLOC / c / name, out / c / name)
        shutil.copy(SALLOC / c / "tree.bin", out / layout.BLOBS / f"{c}.bin")
    return out, plan


def stats_of(c):
    return json.loads((SALLOC / c / "tree" / "stats.json").read_text())


# --- the headline figure (point 1) ----------------------------------------------------------

def test_a_tree_that_defers_everywhere_is_scored_as_the_default():
    stats = stats_of("allreduce")
    assert headline.defers_everywhere(stats["leaf_methods"])
    figure = headline.of_stats(stats)
    # the nested figure of the procedure (6.33 %) is not what deploying this tree gives
    nested = stats["recommendation"]["nested"]["combined"]["capped"]
    assert nested > figure.default + 1
    assert figure.tree == figure.default == pytest.approx(
        (stats["recommendation"]["compared"]["default"]["kinds"]["launches"]["capped"]
         + stats["recommendation"]["compared"]["default"]["kinds"]["leave_one_m_out"]["capped"])
        / 2)
    assert figure.out_of_sample and figure.kinds == ("launches", "leave_one_m_out")
    assert figure.basis() == ("out of sample (nested cross-validation, mean penalty; "
                              "across launches, leave-one-m-out)")


def test_a_tree_that_decides_keeps_its_nested_figure_and_without_one_says_in_sample():
    stats = stats_of("reduce")
    figure = headline.of_stats(stats)
    assert not figure.defers
    assert figure.tree == stats["recommendation"]["nested"]["combined"]["capped"]
    bare = {**stats, "recommendation": None}            # build without --recommend
    figure = headline.of_stats(bare)
    assert not figure.out_of_sample and figure.basis().startswith("in sample")
    assert (figure.tree, figure.default) == (stats["penalty_mean"],
                                             stats["baseline_penalty_mean"])


def test_chosen_text_names_methods_and_deferral():
    M = algorithms.Method
    assert method_text.chosen_text("allreduce", [(M(0, 0), 1)]) == "defer: Open MPI's default"
    assert method_text.chosen_text("bcast", [(M(0, 0), 2)], "mpich") == "defer: MPICH's default"
    assert method_text.chosen_text("bcast", [(M(1, 0), 3)]) == "basic_linear everywhere"
    assert method_text.chosen_text("bcast", [(M(1, 0), 1), (M(3, 8192), 4), (M(0, 0), 2)]) == (
        "pipeline, 8 KiB segments (4 leaves); defer (Open MPI's default) (2 leaves); "
        "basic_linear (1 leaf)")
    assert method_text.chosen_text("bcast", [(M(1, 0), 1), (M(3, 8192), 4), (M(0, 0), 2)],
                                   limit=1) == ("pipeline, 8 KiB segments (4 leaves); "
                                                "2 more methods (3 leaves)")


# --- the summary (points 1 and 3) ------------------------------------------------------------

def test_summary_names_methods_defers_and_prints_the_deploy_lines(tmp_path):
    out, plan = tune_dir(tmp_path)
    text = tune_summary.table(str(out), plan)
    lines = text.splitlines()
    rows = {line.split()[0]: line.split() for line in lines[1:4]}
    assert lines[0].split()[-6:] == ["this", "tree", "Open", "MPI's", "default", "figures"]
    # allreduce defers: its figure is the default's, on the same folds, from stats.json
    allreduce = headline.of_stats(stats_of("allreduce"))
    assert rows["allreduce"][5] == rows["allreduce"][6] == f"{allreduce.default:.2f}%"
    assert rows["allreduce"][7] == "oos"
    bcast = headline.of_stats(stats_of("bcast"))
    assert rows["bcast"][5:7] == [f"{bcast.tree:.2f}%", f"{bcast.default:.2f}%"]
    assert "  allreduce: defer: Open MPI's default" in lines
    assert "  barrier: recursive_doubling everywhere" in lines
    assert "  bcast: pipeline, 128 KiB segments everywhere" in lines
    assert ("  out of sample (nested cross-validation, mean penalty; across launches, "
            "leave-one-m-out): bcast, allreduce") in lines
    # the lines to deploy: absolute, the rules file and the blob directory
    assert "deploy (bcast, barrier; allreduce defers to Open MPI's default):" in lines
    rules = deploy.deploy_line("ompi-rules", str(out / layout.RULES))
    assert f"  {rules} ./app" in lines and str(out.resolve()) in rules
    blob = deploy.deploy_line("blob", str(out / layout.BLOBS))
    assert f"  or with libcollsel: {blob} ./app" in lines
    assert f"COLLSEL_TREES={out / layout.BLOBS} " in blob


def test_summary_of_a_tune_that_defers_everywhere_deploys_nothing(tmp_path):
    out, plan = tune_dir(tmp_path, ("allreduce", "gather"))
    lines = tune_summary.table(str(out), plan).splitlines()
    assert lines[-1] == ("deploy: nothing to deploy: every tree defers to Open MPI's default "
                         "(running without collsel is the same)")
    assert not any("mpirun" in line for line in lines)


def test_blobs_are_where_collsel_trees_finds_them(tmp_path):
    """libcollsel loads a directory's *.bin (runtime/collsel_treeset.c, its blob-set loader):
    the tune writes each collective's blob there, and the summary's line names that directory."""
    assert layout.blob("t", "bcast") == os.path.join("t", layout.BLOBS, "bcast.bin")
    assert os.path.dirname(layout.blob("t", "reduce")) == layout.blobs("t")
    source = (REPO / "runtime" / "collsel_treeset.c").read_text()
    assert 'strcmp(name + n - 4, ".bin")' in source


# --- the deploy lines (point 2) ----------------------------------------------------------------

def test_libcollsel_line_is_absolute_and_built_first_when_missing(tmp_path, monkeypatch):
    root = tmp_path / "checkout"
    monkeypatch.setattr(deploy, "checkout", lambda: str(root))
    line = deploy.deploy_line("blob", "/t/trees")
    lib = root / "build" / "libcollsel" / "openmpi" / "libcollsel.so"
    assert line.startswith(f"make -C {root} build/libcollsel/openmpi/libcollsel.so && "
                           f"LD_PRELOAD={lib} COLLSEL_TREES=/t/trees mpirun.openmpi ")
    lib.parent.mkdir(parents=True)
    lib.write_bytes(b"")
    assert deploy.deploy_line("blob", "/t/trees").startswith(f"LD_PRELOAD={lib} ")
    assert deploy.deploy_line("blob", "/t/trees", "mpich").startswith(
        f"make -C {root} build/libcollsel/mpich/libcollsel.so && mpirun.mpich -genv "
        f"LD_PRELOAD {root}/build/libcollsel/mpich/libcollsel.so ")
    monkeypatch.setattr(deploy, "checkout", lambda: None)      # a wheel: no C source here
    assert deploy.deploy_line("blob", "/t/trees").startswith(f"LD_PRELOAD={deploy.NOT_BUILT} ")


def test_this_checkout_is_found():
    """From an editable install (make setup's .venv) the checkout; from the wheel `make test`
    installs, none (no runtime sources beside it: the deploy line says how to build it)."""
    installed = bool(os.environ.get("COLLSEL_EXPECT_INSTALLED"))
    assert deploy.checkout() == (None if installed else str(REPO))


def test_make_setup_builds_libcollsel():
    r = subprocess.run(["make", "-n", "-B", "-C", str(REPO), "setup"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    # make -n runs the recursive $(MAKE) libcollsel as a dry run too (-B: as if not built yet)
    for family in ("openmpi", "mpich"):
        assert re.search(rf"mpicc\.{family} [^\n]*\\\n[^\n]* -o "
                         rf"build/libcollsel/{family}/libcollsel\.so",
                         r.stdout), r.stdout[-2000:]


# --- the report's deploy box (point 2) -------------------------------------------------------

@pytest.mark.parametrize("given, message", [
    ("ompi-rules", "expected TARGET=PATH"),
    ("rules=x.conf", "unknown target 'rules'"),
    ("blob=/nonexistent/trees", "/nonexistent/trees does not exist"),
])
def test_bad_deployed_is_one_line_and_writes_nothing(tmp_path, given, message):
    line = one_error_line(collsel("report", SALLOC / "barrier" / "table.csv", "--deployed",
                                  given, "--out", tmp_path / "r", timeout=120))
    assert message in line, line
    assert not (tmp_path / "r").exists()


def report_box(out):
    page = (out / "index.html").read_text()
    return page[page.index('id="deploy"'):page.index('id="out-of-sample"')]


def test_report_of_a_tuned_collective_points_at_the_tunes_files(tmp_path):
    out, _ = tune_dir(tmp_path, ("barrier", "allreduce"))
    r = collsel("report", out / "barrier" / "table.csv", "--collective", "barrier", "--quiet",
                "--depths", "2", "--thresholds", "80", "--tree-dir", out / "barrier" / "tree",
                "--deployed", f"blob={out / layout.BLOBS}",
                "--deployed", f"ompi-rules={out / layout.RULES}", "--out", tmp_path / "r",
                cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    rec = json.loads((tmp_path / "r" / "report.json").read_text())["recommendation"]
    steps = {x["target"]: x for x in rec["deploy"]}
    assert steps["ompi-rules"]["emit"] is None and steps["blob"]["emit"] is None
    assert steps["ompi-rules"]["run"] == deploy.deploy_line("ompi-rules", str(out / "rules.conf"))
    assert steps["blob"]["run"] == deploy.deploy_line("blob", str(out / layout.BLOBS))
    assert rec["tree_written"] and rec["tree_json"] == str(out / "barrier" / "tree" / "tree.json")
    assert f"--out {out / 'barrier' / 'tree'}" in rec["build_command"]
    box = report_box(tmp_path / "r")
    assert "tree-barrier" not in box and "is written already" in box
    # one definition: build --recommend prints and records the figures the report shows
    r = collsel("build", out / "barrier" / "table.csv", "--recommend", "--out", tmp_path / "b",
                timeout=300)
    assert r.returncode == 0, r.stderr
    figure = headline.of_stats(json.loads((tmp_path / "b" / "stats.json").read_text()))
    assert rec["headline"]["default"] == pytest.approx(figure.default)
    assert rec["headline"]["tree"] == pytest.approx(figure.tree)
    assert (f"figures: this tree {figure.tree:.2f}%, Open MPI's default {figure.default:.2f}%, "
            f"{figure.basis()}") in r.stdout.splitlines()
    assert rec["headline"]["basis"] == figure.basis()

    # allreduce's tree defers everywhere: nothing to deploy
    r = collsel("report", out / "allreduce" / "table.csv", "--collective", "allreduce",
                "--quiet", "--depths", "2", "--thresholds", "80", "--tree-dir",
                out / "allreduce" / "tree", "--out", tmp_path / "d", cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    rec = json.loads((tmp_path / "d" / "report.json").read_text())["recommendation"]
    assert rec["defers_everywhere"] and rec["deploy"] == []
    assert rec["commands"] == [rec["build_command"]]
    box = report_box(tmp_path / "d")
    assert 'id="nothing-to-deploy"' in box and "Deploy as" not in box
    assert rec["headline"]["tree"] == rec["headline"]["default"]


APP = r"""#include <mpi.h>
int main(int argc, char **argv)
{
    char buf[64] = {0};
    MPI_Init(&argc, &argv);
    MPI_Bcast(buf, 64, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
"""


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("mpicc.openmpi") is None or shutil.which("mpirun.openmpi") is None,
                    reason="Open MPI not installed; run make setup")
def test_the_printed_libcollsel_line_runs_the_tree(tmp_path):
    """The summary's libcollsel line, run as printed (building the library first if it is not
    yet): the library loads (ld.so once ignored a relative path: untuned, exit 0) and decides
    bcast from DIR/trees (COLLSEL_TRACE shows its decision)."""
    if deploy.checkout() is None:
        pytest.skip("an installed wheel has no libcollsel beside it: its line says how to build "
                    "it in a checkout (test_report_family checks that text)")
    out, plan = tune_dir(tmp_path, ("bcast", "allreduce"))
    line = next(x for x in tune_summary.table(str(out), plan).splitlines()
                if x.startswith("  or with libcollsel: "))
    command = line.split(": ", 1)[1].replace(" ./app", "")
    app = tmp_path / "app"
    (tmp_path / "app.c").write_text(APP)
    subprocess.run(["mpicc.openmpi", str(tmp_path / "app.c"), "-o", str(app)], check=True,
                   timeout=120)
    r = subprocess.run(f"{command} -x COLLSEL_TRACE --allow-run-as-root -np 2 {app}", shell=True,
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "COLLSEL_TRACE": "1"})
    assert r.returncode == 0, r.stderr
    assert "cannot be preloaded" not in r.stderr
    traced = [x for x in r.stderr.splitlines() if x.startswith("collsel-trace bcast ")]
    assert len(traced) == 2 and all(" alg=" in x for x in traced), r.stderr
