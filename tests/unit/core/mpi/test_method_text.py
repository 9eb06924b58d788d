"""Methods by their family's name wherever a person reads them (core.mpi.method_text), the ids kept
for scripts (query/check-rules --ids), and the plain warning when a tree loses out of sample to
the MPI's default or the best fixed method (core.evaluate.baseline_warning)."""
import contextlib
import io
import json
import types

import pytest

from collsel import cli
from collsel.core.evaluate import baseline_warning
from collsel.core.mpi.algorithms import Method, hier_id
from collsel.core.mpi.method_text import default_name, leaf_methods_text, method_text


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in args])
    return types.SimpleNamespace(returncode=code, stdout=out.getvalue(), stderr=err.getvalue())


@pytest.mark.parametrize("collective, method, family, text", [
    ("bcast", Method(1, 0), "openmpi", "basic_linear"),
    ("bcast", Method(1, 0), "mpich", "binomial"),
    ("reduce", Method(4, 0), "mpich", "reduce_scatter_gather"),
    ("bcast", Method(3, 8192), "openmpi", "pipeline, 8 KiB segments"),
    ("bcast", Method(2, 1024, 4), "openmpi", "chain, 1 KiB segments, 4 chains"),
    ("reduce", Method(4, 1000), "openmpi", "binary, 1000 B segments"),
    ("bcast", Method(0, 0), "openmpi", "defer (Open MPI's default)"),
    ("reduce", Method(0, 0), "mpich", "defer (MPICH's default)"),
    ("bcast", Method(hier_id("bcast", 4, 2, 0), 0), "openmpi",
     "hierarchical, 4 groups: chain within groups, Open MPI's default among their leaders"),
])
def test_method_text(collective, method, family, text):
    assert method_text(collective, method, family) == text


def test_leaf_methods_text_ranks_and_counts():
    counts = [(Method(1, 0), 1), (Method(3, 8192), 5), (Method(6, 0), 5), (Method(7, 0), 2)]
    assert leaf_methods_text("bcast", counts) == (
        "pipeline, 8 KiB segments: 5 leaves; binomial: 5 leaves; knomial: 2 leaves; "
        "basic_linear: 1 leaf")
    assert leaf_methods_text("bcast", counts, limit=2).endswith(
        "binomial: 5 leaves; 2 more methods: 3 leaves")


def figures(mean, cells=10, default=None, fixed=None, on_default=None):
    tree = {"mean": mean, "cells": cells,
            "on_default_cells": on_default or {"mean": mean, "cells": cells}}
    return {"label": "leave-one-P-out", "tree": tree,
            "default": {"mean": default, "cells": cells}, "best_fixed": {"mean": fixed,
                                                                         "cells": cells}}


def test_warning_names_both_figures():
    block = {"leave_one_P_out": figures(72.45, default=65.09, fixed=80.0)}
    assert baseline_warning.worse_than_baselines(block, "openmpi") == [
        "this tree is worse than doing nothing: 72.45 % leave-one-P-out vs Open MPI's default "
        "65.09 %"]
    assert baseline_warning.beaten_by(block) == ("default",)
    block = {"launches": dict(figures(3.12, default=16.0, fixed=3.05),
                              label="cross-validated across launches")}
    assert baseline_warning.worse_than_baselines(block, "mpich") == [
        "this tree is worse than one fixed method everywhere: 3.12 % cross-validated across "
        "launches vs the best fixed method 3.05 % (one method everywhere, chosen on each "
        "training fold)"]
    both = {"leave_one_P_out": figures(50.0, default=40.0, fixed=45.0)}
    (message,) = baseline_warning.worse_than_baselines(both, "mpich")
    assert "vs MPICH's default 40.00 % and the best fixed method 45.00 %" in message
    assert baseline_warning.beaten_by(both) == ("default", "best fixed")


def test_no_warning_when_equal_or_better_or_unscored():
    assert baseline_warning.worse_than_baselines(     # a one-leaf tree of the best fixed method
        {"leave_one_P_out": figures(3.0463829654518193, default=16.0,
                                    fixed=3.0463829654518193)}, "openmpi") == []
    assert baseline_warning.worse_than_baselines(
        {"leave_one_P_out": figures(1.0, default=5.0, fixed=2.0), "launches": None,
         "leave_one_m_out": figures(None)}, "openmpi") == []
    assert baseline_warning.worse_than_baselines(
        {"leave_one_P_out": figures(5.0, default=None, fixed=9.0)}, "openmpi") == []


def test_default_compared_on_its_own_cells():
    block = {"leave_one_P_out": figures(10.0, cells=20, default=8.0, fixed=20.0,
                                        on_default={"mean": 9.0, "cells": 12})}
    (message,) = baseline_warning.worse_than_baselines(block, "openmpi")
    assert message == ("this tree is worse than doing nothing: 10.00 % leave-one-P-out (9.00 % "
                       "on the 12 cells where the default was measured) vs Open MPI's default "
                       "8.00 %")


def alternating_table(path, family):
    """Best method alternating with P: a tree built without one P picks the other method there
    (penalty 200 %), while the default costs 50 % everywhere."""
    names = {"openmpi": ("basic_linear", "chain"), "mpich": ("binomial", "nb")}[family]
    lines = ([f"# algorithm_family={family}"] if family != "openmpi" else []) + [
        "collective,comm_size,msg_size,algorithm,segsize,time_us"]
    for p in (2, 3, 4, 5, 6):
        for m in (8, 4096):
            best = names[p % 2]
            lines += [f"bcast,{p},{m},{a},0,{1.0 if a == best else 3.0}" for a in names]
            lines.append(f"bcast,{p},{m},0,0,1.5")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("family", ["openmpi", "mpich"])
def test_build_warns_and_names_in_the_familys_words(tmp_path, family):
    table = alternating_table(tmp_path / "t.csv", family)
    r = run("build", table, "--collective", "bcast", "--out", tmp_path / "t")
    assert r.returncode == 0, r.stderr
    the_default = default_name(family)
    warnings = [ln for ln in r.stderr.splitlines() if "warning" in ln]
    assert warnings and warnings[0].startswith(f"collsel: warning: {tmp_path / 't'}: this tree "
                                               "is worse than doing nothing: 200.00 % "
                                               "leave-one-P-out vs ")
    assert f"{the_default} 50.00 %" in warnings[0]
    assert f"({the_default} 50.00% on 6, best fixed method" in r.stdout
    leaves = {"openmpi": "basic_linear: 6 leaves; chain: 4 leaves",
              "mpich": "binomial: 6 leaves; nb: 4 leaves"}[family]
    assert f"methods in the leaves: {leaves}" in r.stdout
    stats = json.loads((tmp_path / "t" / "stats.json").read_text())
    assert stats["warnings"] == [w.split(": ", 3)[3] for w in warnings]
    assert {(m["algorithm"], m["name"], m["leaves"]) for m in stats["leaf_methods"]} == \
        {(1, leaves.split(":")[0], 6), (2, leaves.split("; ")[1].split(":")[0], 4)}


def test_stats_marks_and_warns(tmp_path):
    table = alternating_table(tmp_path / "t.csv", "mpich")
    r = run("stats", table, "--collective", "bcast", "--depths", "1", "--thresholds", "90")
    assert r.returncode == 0, r.stderr
    assert "MPICH's default (algorithm 0) on 10 cells" in r.stdout
    lines = r.stdout.splitlines()
    assert lines[6].endswith("worse out of sample than")
    exact = [ln for ln in lines[7:] if " exact " in ln]
    assert len(exact) == 4 and all(ln.endswith(" default and best fixed") for ln in exact)
    (line,) = r.stderr.splitlines()
    assert line.startswith("collsel: warning: ") and "trees are worse out of sample than " \
        "MPICH's default or the best fixed method" in line
    assert "exact tree: this tree is worse than doing nothing: 200.00 %" in line
    rows = json.loads(run("stats", table, "--collective", "bcast", "--depths", "1",
                          "--thresholds", "90", "--format", "json").stdout)
    assert all("warnings" in r and "worse_than" in r for r in rows)


def test_query_names_by_family_and_ids_for_scripts(tmp_path):
    trees = {}
    for family in ("openmpi", "mpich"):
        table = alternating_table(tmp_path / f"{family}.csv", family)
        assert run("build", table, "--collective", "bcast",
                   "--out", tmp_path / family).returncode == 0
        trees[family] = tmp_path / family / "tree.json"
    named = {f: run("query", t, "--comm-size", 4, "--msg-size", 65536).stdout
             for f, t in trees.items()}
    assert named == {"openmpi": "P=4 m=65536: basic_linear (alg 1, seg 0, fan 0)\n",
                     "mpich": "P=4 m=65536: binomial (alg 1, seg 0, fan 0)\n"}
    for t in trees.values():
        assert run("query", t, "--ids", "--comm-size", 4, "--msg-size", 65536).stdout == \
            "1 0 0\n"
    points = tmp_path / "points"
    points.write_text("3 8\n4 8\n")
    assert run("query", trees["mpich"], "--points", points).stdout == (
        "P=3 m=8: nb (alg 2, seg 0, fan 0)\nP=4 m=8: binomial (alg 1, seg 0, fan 0)\n")
    assert run("query", trees["mpich"], "--ids", "--points", points).stdout == "2 0 0\n1 0 0\n"


def test_check_rules_query_names_and_ids(tmp_path):
    rules = tmp_path / "r.conf"
    rules.write_text("1\n7\n1\n2\n1\n0 3 0 8192 0\n")
    r = run("check-rules", rules, "--collective", "bcast", "--query", 4, 65536)
    assert r.stdout == "P=4 m=65536: pipeline, 8 KiB segments (alg 3, seg 8192, fan 0)\n"
    r = run("check-rules", rules, "--collective", "bcast", "--ids", "--query", 4, 65536)
    assert r.stdout == "3 8192 0\n"


def test_baseline_in_the_familys_words(tmp_path):
    r = run("baseline", alternating_table(tmp_path / "t.csv", "mpich"), "--worst", 1)
    assert r.returncode == 0, r.stderr
    assert "bcast: MPICH's own decision (algorithm 0)" in r.stdout
    assert r.stdout.rstrip().endswith("50.0%  binomial")
