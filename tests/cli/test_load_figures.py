"""Issue 19 figures without a cluster: the C decision function that takes the probe's figure
equals `collsel query --z` on the floor of it, compare --fresh scores the load-aware tree where
the best method flips with the probe, and stats --probe-latency measures the correlation."""
import json
import shutil
import subprocess

import pytest

from collsel.cli import main as cli

HEADER = "collective,comm_size,msg_size,algorithm,segsize,faninout,time_us,probe_us\n"


def table(path, quiet, loaded):
    """linear (1) wins at a quiet probe, binomial (6) under load; the default (0) is slow."""
    rows = []
    for m in (4096, 65536):
        for probe, lin, bino in ((quiet, 10.0, 20.0), (loaded, 90.0, 40.0)):
            rows += [f"bcast,4,{m},1,0,0,{lin},{probe}", f"bcast,4,{m},6,0,0,{bino},{probe}",
                     f"bcast,4,{m},0,0,0,{3 * bino},{probe}"]
    path.write_text(HEADER + "\n".join(rows) + "\n")
    return str(path)


def test_fresh_scores_the_load_aware_tree(tmp_path, capsys):
    train = table(tmp_path / "train.csv", 100.2, 2000.7)
    fresh = [table(tmp_path / "f1.csv", 120.0, 1800.0)]
    assert cli(["compare", "--fresh", "--collective", "bcast", "--z", "probe_us", "--format",
                "json", train, *fresh]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["z_aware"]["mean"] == 0.0 and got["z_aware"]["cells"] == 4
    assert got["z_oblivious"]["mean"] > 0            # one method for both probe values
    assert got["default"]["mean"] >= 100


def test_decide_probe_equals_query(tmp_path, capsys):
    cc = shutil.which("cc") or pytest.skip("no C compiler")
    train = table(tmp_path / "train.csv", 100.2, 2000.7)
    assert cli(["build", train, "--collective", "bcast", "--z", "probe_us", "--out",
                str(tmp_path / "t")]) == 0
    assert cli(["emit", "--target", "c", "--out", str(tmp_path / "c"),
                str(tmp_path / "t" / "tree.json")]) == 0
    probes = [0.0, 99.9, 100.2, 1050.5, 1999.99, 2000.7, 1e7, -3.0]
    main = tmp_path / "main.c"
    main.write_text('#include <stdio.h>\n#include "decision.h"\nint main(void) {\n'
                    f"  double p[] = {{{', '.join(map(repr, probes))}}};\n"
                    "  for (int i = 0; i < (int)(sizeof p / sizeof *p); i++) {\n"
                    "    int s, f, a = collsel_bcast_decide_probe(4, 65536, p[i], &s, &f);\n"
                    '    printf("%d %d %d\\n", a, s, f);\n  }\n  return 0;\n}\n')
    exe = tmp_path / "main"
    subprocess.run([cc, "-std=c99", "-Wall", "-Werror", f"-I{tmp_path / 'c'}", str(main),
                    str(tmp_path / "c" / "decision.c"), "-o", str(exe)], check=True)
    c_out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    points = tmp_path / "points.txt"
    points.write_text("".join(f"4 65536 {max(0, int(p))}\n" for p in probes))
    capsys.readouterr()
    assert cli(["query", str(tmp_path / "t" / "tree.json"), "--ids", "--points", str(points)]) == 0
    assert c_out == capsys.readouterr().out
    assert len(set(c_out.splitlines())) == 2          # both methods are chosen somewhere


def test_probe_latency_correlation(tmp_path, capsys):
    journal = tmp_path / "b.csv.launches"
    lines = ["collective,comm_size,msg_size,algorithm,segsize,faninout,launch,median_us,"
             "load_level,probe_us"]
    for k, (probe, t) in enumerate([(100, 10), (200, 21), (400, 39), (800, 85)], 1):
        lines.append(f"bcast,4,4096,0,0,0,{k},{t},off,{probe}")
    journal.write_text("\n".join(lines) + "\n")
    (tmp_path / "b.csv").write_text(HEADER)
    assert cli(["stats", str(tmp_path / "b.csv"), "--collective", "bcast", "--probe-latency",
                "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["pairs"] == 4 and row["spearman"] == pytest.approx(1.0)
    assert row["pearson"] > 0.99


def fresh_json(capsys, *args):
    capsys.readouterr()
    assert cli(["compare", "--fresh", "--collective", "bcast", "--z", "probe_us", *args]) == 0
    return capsys.readouterr().out


def test_probe_cost_against_the_time_it_saves(tmp_path, capsys):
    train = table(tmp_path / "train.csv", 100.2, 2000.7)
    fresh = table(tmp_path / "f1.csv", 120.0, 1800.0)
    got = json.loads(fresh_json(capsys, "--format", "json", "--probe-cost-us", "30", train, fresh))
    # the aware tree takes the best everywhere; the oblivious one one method everywhere: its
    # saving is that method's time over the best, from the fresh table's own times
    cells = [(10.0, 20.0), (90.0, 40.0)] * 2          # (linear, binomial) per fresh cell
    excess = {alg: [t[k] - min(t) for t in cells] for k, alg in enumerate(("linear", "binomial"))}
    pen = {alg: 100 * sum(e / min(t) for e, t in zip(excess[alg], cells)) / 4 for alg in excess}
    (oblivious,) = [a for a in pen if pen[a] == pytest.approx(got["z_oblivious"]["mean"])]
    s = got["saving"]
    assert s["cells"] == 4 and s["saved_us"] == pytest.approx(sum(excess[oblivious]) / 4)
    assert s["saved_us"] > 0 and s["payback_calls"] == pytest.approx(30 / s["saved_us"])
    assert "pays for itself after" in fresh_json(capsys, "--probe-cost-us", "30", train, fresh)


def test_probe_never_pays_when_the_load_aware_tree_saves_nothing(tmp_path, capsys):
    train = table(tmp_path / "train.csv", 100.2, 2000.7)
    # in the fresh runs binomial wins at every probe value: the aware tree's quiet choice
    # (linear) loses, the oblivious tree (binomial everywhere) is best
    fresh = tmp_path / "f1.csv"
    fresh.write_text(HEADER + "".join(f"bcast,4,{m},{alg},0,0,{t},{p}\n" for m in (4096, 65536)
                                      for p in (120.0, 1800.0)
                                      for alg, t in ((1, 20.0), (6, 10.0), (0, 60.0))))
    got = json.loads(fresh_json(capsys, "--format", "json", "--probe-cost-us", "30", train,
                                str(fresh)))
    assert got["saving"]["saved_us"] <= 0 and got["saving"]["payback_calls"] is None
    assert "never pays for itself" in fresh_json(capsys, "--probe-cost-us", "30", train,
                                                 str(fresh))
