"""`collsel report`: the statistics in report.json recomputed independently (plain CSV reading and
a plain walk of each tree), baselines and the model-based choice recomputed, the page's table
taken from report.json, determinism, octree panels, and bad input."""
import contextlib
import csv
import html
import io
import json
import os
import re
import shlex
import shutil
import statistics

import numpy as np
import pytest

from collsel import cli
from collsel.core.maps import decision_map, table
from collsel.core.trees import tree

from helpers import collsel, read_points, synthetic_3d


def perturbed_copy(src, dst, seed=3):
    """A 'predicted' table: the measured one with every time scaled by a random factor."""
    rng = np.random.default_rng(seed)
    with open(src) as f, open(dst, "w") as out:
        rows = list(csv.reader(line for line in f if not line.startswith("#")))
        w = csv.writer(out, lineterminator="\n")
        w.writerow(rows[0])
        t = rows[0].index("time_us")
        for r in rows[1:]:
            r[t] = f"{float(r[t]) * rng.uniform(0.6, 1.6):.6g}"
            w.writerow(r)
    return dst


def walk(t, i, j):
    """Leaf of grid cell (i, j), by a plain loop over the flat arrays."""
    node = 0
    while t.first_child[node] != -1:
        offset = 0
        for d, cell in ((0, i), (1, j)):
            s = int(t.split[node, d])
            if s != -2:
                offset = 2 * offset + (cell >= s)
        node = int(t.first_child[node]) + offset
    return node


@pytest.fixture(scope="module")
def report(tmp_path_factory, tanjaderin):
    d = tmp_path_factory.mktemp("report")
    model = perturbed_copy(tanjaderin["bcast"], d / "predicted.csv")
    args = [tanjaderin["bcast"], "--collective", "bcast", "--depths", "3", "--thresholds",
            "80", "--budget", "1%", "--model-table", model, "--quiet", "--png"]
    # in its own directory: the deploy box names tree-bcast there, as an absolute path
    r = collsel("report", *args, "--out", d / "a", cwd=d)
    assert r.returncode == 0, r.stderr
    return {"dir": d / "a", "args": args, "model": model, "table": tanjaderin["bcast"],
            "json": json.loads((d / "a" / "report.json").read_text()), "tmp": d}


def test_stats_recomputed_from_table_and_tree(report):
    rep = report["json"]
    times, base = read_points(report["table"])
    ps = sorted({p for p, _ in times})
    ms = sorted({m for _, m in times})
    dmap = decision_map.build_map(table.read_table(report["table"]).select("bcast"))
    methods = [(m.algorithm, m.segsize, m.faninout) for m in dmap.methods]
    assert len(rep["stats"]) == 2 * 2 * (3 + 1 + 1)
    for row in rep["stats"]:
        t = tree.build_tree(dmap, tree.BuildOptions(
            row["split"], row["leaf"], row["value"] if row["limit"] == "depth" else None,
            row["value"] if row["limit"] == "threshold" else None))
        leaves = [k for k in range(t.node_count) if t.first_child[k] == -1]
        pens, depths, unmeasured = [], [], 0
        for i, p in enumerate(ps):
            for j, m in enumerate(ms):
                leaf = walk(t, i, j)
                depths.append(int(t.depth[leaf]))
                cell = times.get((p, m))
                if not cell:
                    continue
                reference = min(cell.values())    # the fastest forced method (core.maps.cell_cost)
                if (0, 0, 0) in methods and (p, m) in base:    # "defer to the MPI"
                    cell = {**cell, (0, 0, 0): base[(p, m)]}
                chosen = methods[t.method[leaf]]
                if chosen in cell:
                    pens.append(100 * (cell[chosen] / reference - 1))
                else:
                    unmeasured += 1
        where = f"row {row['id']} ({row['split']} {row['leaf']} {row['label']})"
        assert row["nodes"] == t.node_count and row["leaves"] == len(leaves), where
        assert row["max_depth"] == max(int(t.depth[k]) for k in leaves), where
        assert row["min_depth"] == min(int(t.depth[k]) for k in leaves), where
        assert row["mean_depth"] == pytest.approx(sum(depths) / len(depths), abs=1e-12), where
        assert row["unmeasured_choices"] == unmeasured, where
        assert row["penalty_mean"] == pytest.approx(statistics.fmean(pens), abs=1e-9), where
        assert row["penalty_median"] == pytest.approx(statistics.median(pens), abs=1e-9), where
        assert row["penalty_max"] == pytest.approx(max(pens), abs=1e-9), where
        assert row["penalty_min"] == pytest.approx(min(pens), abs=1e-9), where

    # Pareto front: no row strictly better on both axes than a front member
    for key, front in rep["pareto"].items():
        for i in front:
            a = rep["stats"][i]
            assert not any(b[key] <= a[key] and b["penalty_mean"] <= a["penalty_mean"]
                           and (b[key] < a[key] or b["penalty_mean"] < a["penalty_mean"])
                           for b in rep["stats"])


def test_baselines_recomputed(report):
    rep = report["json"]
    times, base = read_points(report["table"])
    # against the fastest forced method (core.maps.cell_cost): negative where the default beats it
    best = {k: min(v.values()) for k, v in times.items()}
    ompi = [100 * (base[k] / best[k] - 1) for k in sorted(times) if k in base]
    b = rep["baselines"]["ompi"]
    assert b["cells"] == len(ompi) == 160
    assert b["mean"] == pytest.approx(statistics.fmean(ompi), abs=1e-9)
    assert b["median"] == pytest.approx(statistics.median(ompi), abs=1e-9)
    assert b["max"] == pytest.approx(max(ompi), abs=1e-9)

    # model-based choice: argmin of the predicted times, scored with the measured ones
    pred, pred_base = read_points(report["model"])
    pens = []
    for k in sorted(times):
        options = {**pred[k], **({(0, 0, 0): pred_base[k]} if k in pred_base else {})}
        choice = min(sorted(options), key=lambda mth: options[mth])
        measured = {**times[k], **({(0, 0, 0): base[k]} if k in base else {})}
        pens.append(100 * (measured[choice] / best[k] - 1))
    mb = rep["baselines"]["model"]
    assert mb["cells"] == len(pens)
    assert mb["mean"] == pytest.approx(statistics.fmean(pens), abs=1e-9)
    assert mb["max"] == pytest.approx(max(pens), abs=1e-9)

    # losses: cells where the recommended tree is slower than Open MPI's own choice
    ps = sorted({p for p, _ in times})
    ms = sorted({m for _, m in times})
    rec = rep["recommendation"]
    method_keys = [(m["algorithm"], m["segsize"], m["faninout"]) for m in rep["data"]["methods"]]
    lost = set()
    for i, p in enumerate(ps):
        for j, m in enumerate(ms):
            chosen = method_keys[rec["choice"][i][j]]
            t = base[(p, m)] if chosen == (0, 0, 0) else times[(p, m)][chosen]
            if (p, m) in base and t > base[(p, m)]:
                lost.add((p, m))
    assert {(x["comm_size"], x["msg_size"]) for x in b["losses"]} == lost


def test_page_numbers_come_from_report_json(report):
    page = (report["dir"] / "index.html").read_text()
    rep = report["json"]
    assert "<script" not in page and "http://" not in page and "https://" not in page
    # the statistics table, cell by cell, is report.json's rows formatted
    stats_html = page[page.index('id="stats"'):page.index('id="tradeoff"')]
    cells = [[html.unescape(re.sub("<[^>]+>", "", c)).strip() for c in
              re.findall(r"<td[^>]*>(.*?)</td>", tr)]
             for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", stats_html, re.S) if "<td" in tr]
    assert len(cells) == len(rep["stats"])
    for c, r in zip(cells, rep["stats"]):
        limit = (f"max depth {r['value']}" if r["limit"] == "depth" else "none (exact tree)"
                 if r["limit"] == "exact" else f"accuracy threshold {r['value']:g} %")
        assert c[:6] == [r["split"], r["leaf"], limit, str(r["max_depth"]),
                         str(r["min_depth"]), f"{r['mean_depth']:.2f}"]
        assert c[6:13] == [f"{r['penalty_min']:.2f}", f"{r['penalty_max']:.2f}",
                           f"{r['penalty_mean']:.2f}", f"{r['penalty_median']:.2f}",
                           "–" if r["excess_us_mean"] is None else f"{r['excess_us_mean']:.3f}",
                           str(r["leaves"]), str(r["nodes"])]
    # every image is embedded; with --png every figure also exists as PNG and SVG, the page's
    # width_px the PNG's own
    assert re.findall(r'<img src="([^"]+)"', page) and all(
        s.startswith("data:image/svg+xml;base64,") for s in re.findall(r'<img src="([^"]+)"',
                                                                        page))
    for f in rep["figures"]:
        png = (report["dir"] / f["png"]).read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        assert int.from_bytes(png[16:20], "big") == f["width_px"]
        assert b"<svg" in (report["dir"] / f["svg"]).read_bytes()[:2000]
        assert f'<a href="{f["png"]}">' in page
    rec = rep["recommendation"]
    assert rec["commands"][0] == rec["build_command"] == (
        f"collsel build {report['table']} --collective bcast --recommend --criterion combined "
        f"--out {report['tmp'] / 'tree-bcast'}")
    assert html.escape(rec["commands"][0]) in page


def test_deterministic(report):
    r = collsel("report", *report["args"], "--out", report["tmp"] / "b", cwd=report["tmp"])
    assert r.returncode == 0, r.stderr
    a_files = sorted(p.name for p in report["dir"].iterdir())
    b_files = sorted(p.name for p in (report["tmp"] / "b").iterdir())
    assert a_files == b_files and "index.html" in a_files and "tradeoff.svg" in a_files
    for name in a_files:
        assert (report["dir"] / name).read_bytes() == (report["tmp"] / "b" / name).read_bytes(), \
            name


@pytest.mark.slow
def test_octree_one_panel_per_z(tmp_path):
    t = synthetic_3d(tmp_path / "t3.csv")
    r = collsel("report", t, "--collective", "bcast", "--z", "ppn", "--depths", "1",
                "--thresholds", "80", "--quiet", "--out", tmp_path / "r")
    assert r.returncode == 0, r.stderr
    rep = json.loads((tmp_path / "r" / "report.json").read_text())
    names = [f["name"] for f in rep["figures"]]
    assert [n for n in names if n.startswith("maps")] == ["maps-z1", "maps-z2", "maps-z4"]
    assert [n for n in names if n.startswith("penalty")] == ["penalty-z1", "penalty-z2",
                                                            "penalty-z4"]
    assert "--z ppn" in rep["recommendation"]["commands"][0]
    assert rep["baselines"] == {}      # no algorithm-0 rows, no model table


@pytest.mark.slow
def test_rerun_removes_its_stale_files_and_keeps_the_users(report, tmp_path):
    out = tmp_path / "r"
    t = synthetic_3d(tmp_path / "t3.csv")
    r = collsel("report", t, "--collective", "bcast", "--z", "ppn", "--depths", "1",
                "--thresholds", "80", "--quiet", "--out", out)
    assert r.returncode == 0, r.stderr
    assert (out / "maps-z2.svg").exists()
    # without --png no PNG: report.json and the page name the SVG alone
    assert not list(out.glob("*.png"))
    doc = json.loads((out / "report.json").read_text())
    assert all(f["png"] is None and f["width_px"] > 0 for f in doc["figures"])
    assert ".png" not in (out / "index.html").read_text()
    (out / "my-notes.txt").write_text("mine\n")
    r = collsel("report", *report["args"], "--out", out)     # a 2-D report: no z panels
    assert r.returncode == 0, r.stderr
    left = sorted(p.name for p in out.iterdir())
    assert left == sorted([p.name for p in report["dir"].iterdir()] + ["my-notes.txt"])
    assert (out / "report-files.txt").read_text().split() == [
        n for n in left if n not in ("my-notes.txt", "report-files.txt")]
    assert (out / "my-notes.txt").read_text() == "mine\n"


def _bad(tmp_path, *args):
    """In-process (no interpreter start per case): exit 2, one line, no output directory."""
    out = tmp_path / "out"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = cli.main(["report", *map(str, args), "--quiet", "--out", str(out)])
    assert status == 2, err.getvalue()
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("collsel: error: "), err.getvalue()
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]
    return lines[0]


def test_bad_input(tmp_path, tanjaderin):
    bad = tmp_path / "bad.csv"
    bad.write_text("collective,comm_size,msg_size,algorithm,segsize,time_us\n"
                   "bcast,2,8,1,0,1.5\nbcast,2,x,1,0,2\n")
    assert f"{bad}:3: msg_size 'x'" in _bad(tmp_path, bad, "--collective", "bcast")
    assert "missing.csv" in _bad(tmp_path, tmp_path / "missing.csv", "--collective", "bcast")
    assert "no rows for collective 'reduce'" in _bad(tmp_path, tanjaderin["bcast"],
                                                     "--collective", "reduce")
    assert "--thresholds" in _bad(tmp_path, tanjaderin["bcast"], "--collective", "bcast",
                                  "--thresholds", "80,abc")
    assert "--budget" in _bad(tmp_path, tanjaderin["bcast"], "--collective", "bcast",
                              "--budget", "-3")
    model = tmp_path / "model.csv"
    model.write_text("collective,comm_size,msg_size,algorithm,segsize,time_us\n"
                     "reduce,2,8,1,0,1.5\n")
    assert f"--model-table {model}: predicts reduce, but the report is of bcast" in _bad(
        tmp_path, tanjaderin["bcast"], "--collective", "bcast", "--model-table", model)


def test_recommended_tree_is_build_recommends(report, tmp_path):
    """The command report.json records writes the very tree.json the report pictures, and its
    stats.json holds the out-of-sample figures the report shows (one implementation)."""
    rec = report["json"]["recommendation"]
    words = shlex.split(rec["build_command"])
    assert words[:2] == ["collsel", "build"] and words[-2] == "--out"
    r = collsel(*words[1:-1], tmp_path / "built")
    assert r.returncode == 0, r.stderr
    built = (tmp_path / "built" / "tree.json").read_bytes()
    assert built == (report["dir"] / "recommended-tree.json").read_bytes()
    doc = json.loads(built)
    assert len(doc["nodes"]["first_child"]) == rec["nodes"]
    stats = json.loads((tmp_path / "built" / "stats.json").read_text())
    oos = report["json"]["out_of_sample"]
    for col, kind in zip(oos["columns"][1:], [c["kind"] for c in oos["columns"][1:]]):
        block = stats["out_of_sample"][kind]
        rows = {row["key"]: row["cells"][oos["columns"].index(col)] for row in oos["rows"]}
        if block is None:
            assert not col["available"] and rows["recommended"] is None
            continue
        assert col["folds"] == block["folds"]
        for key, theirs in (("recommended", "tree"), ("default", "default"),
                            ("best_fixed", "best_fixed")):
            assert rows[key]["cells"] == block[theirs]["cells"], (kind, key)
            assert rows[key]["mean"] == pytest.approx(block[theirs]["mean"], abs=1e-12)


def test_robust_sections(report):
    """Candidate counts, tie-set sizes and the in-sample column recomputed from the table; the
    loss rows' resolution flag follows its rule."""
    rep = report["json"]
    times, base = read_points(report["table"])
    ps = sorted({p for p, _ in times})
    ms = sorted({m for _, m in times})
    rb = rep["robust"]
    n_methods = len(rep["data"]["methods"])
    for i, p in enumerate(ps):
        for j, m in enumerate(ms):
            expect = len(times[(p, m)]) + ((p, m) in base and rep["robust"]["defer_candidate"])
            assert rb["candidates"][i][j] == expect
            assert rb["tie_size"][i][j] == 1          # no CI, tied or tolerance in this table
    assert rb["methods"] == n_methods and rb["confidence"] is None and not rb["has_ties"]
    inside = {row["key"]: row["cells"][0] for row in rep["out_of_sample"]["rows"]}
    # the exact tree takes each cell's best, the default where it beats every forced method
    exact = [min(0.0, 100 * (base[k] / min(v.values()) - 1)) if k in base else 0.0
             for k, v in times.items()]
    assert inside["exact"]["mean"] == pytest.approx(statistics.fmean(exact), abs=1e-9)
    assert inside["default"]["mean"] == pytest.approx(rep["baselines"]["ompi"]["mean"])
    for loss in rep["baselines"]["ompi"]["losses"]:
        assert loss["loss_us"] == pytest.approx(loss["tree_us"] - loss["other_us"])
        assert loss["below_resolution"] == (loss["loss_us"] < rep["resolution_us"])
    page = (report["dir"] / "index.html").read_text()
    assert 'id="oos-table"' in page and "No tie information in this data" in page
    assert "launches: not computed" in page


def _overlaps(fig):
    """Pairs of tick labels, per axis of every panel, whose drawn boxes overlap."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    found = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            boxes = [t.get_window_extent(renderer) for t in axis.get_ticklabels()
                     if t.get_visible() and t.get_text()]
            found += [(a, b) for a, b in zip(boxes, boxes[1:]) if a.overlaps(b)]
    return found


def test_figures_drawn_by_the_pool_are_the_serial_bytes(report):
    """Two processes draw the figures (figure_pool), each group whole; the bytes, names and
    page order are those one process draws."""
    from collsel.sinks.report import figure_pool
    rep = report["json"]
    serial = figure_pool.render_all(rep)
    with figure_pool.pool() as workers:
        assert workers is not None                  # the test machines have two cores
        pooled = figure_pool.render_all(rep, workers)
    assert pooled == serial
    assert [n for n, *_ in serial] == [f["name"] for f in rep["figures"]]


def test_inner_panels_share_the_outer_tick_labels(report):
    """Only the left column labels P and only the bottom panels label m: the panels of one
    figure share their axes, and every text costs drawing time twice (PNG and SVG)."""
    import matplotlib
    from collsel.sinks.report import plots
    rep = report["json"]
    with matplotlib.rc_context(plots.RC):
        _, fig, _ = plots.map_figures(rep, plots._Frame(rep))[0]
    axes = fig.axes
    assert len(axes) > plots.MAP_COLUMNS          # at least two rows of panels
    shown = [(any(t.get_visible() for t in ax.get_xticklabels()),
              any(t.get_visible() for t in ax.get_yticklabels())) for ax in axes]
    n = len(axes)
    assert shown == [(k + plots.MAP_COLUMNS >= n, k % plots.MAP_COLUMNS == 0) for k in range(n)]


def test_tick_labels_do_not_overlap(report, monkeypatch):
    """Every map panel's tick labels, measured in the drawn figure; with the thinning switched
    off (every power of two labelled) the same check finds the "16K64K256K1M" overlap."""
    import matplotlib
    from collsel.sinks.report import plots
    rep = report["json"]
    with matplotlib.rc_context(plots.RC):
        frame = plots._Frame(rep)
        figures = plots.map_figures(rep, frame) + plots.robust_figures(rep, frame)
        for name, fig, _ in figures:
            assert not _overlaps(fig), name
        monkeypatch.setattr(plots, "TICK_GAP_PX", -1e9)      # every power of two fits
        name, fig, _ = plots.map_figures(rep, plots._Frame(rep))[0]
        assert _overlaps(fig)


def test_deploy_commands_run_and_match_the_emitters(report, tmp_path):
    """Every command the recommendation box gives works as printed from anywhere (build, then
    each emit: absolute paths), and its deploy line is the one sinks.emit.deploy renders into
    the rules file's header."""
    from collsel.sinks.emit.deploy import deploy_line
    rec = report["json"]["recommendation"]
    assert [x["target"] for x in rec["deploy"]] == ["ompi-rules", "blob", "c", "ompi-dec-fixed"]
    assert rec["commands"] == [rec["build_command"]] + [x["emit"] for x in rec["deploy"]
                                                        if x["emit"]]
    # the C files are the build's own (decision.c/.h, the dec_fixed body): no emit for them
    assert [x["target"] for x in rec["deploy"] if x["written_by"] == "build"] == [
        "c", "ompi-dec-fixed"]
    tree_dir = report["tmp"] / "tree-bcast"
    shutil.rmtree(tree_dir, ignore_errors=True)
    for command in rec["commands"]:
        r = collsel(*shlex.split(command)[1:], cwd=tmp_path)      # not where the report ran
        assert r.returncode == 0, (command, r.stderr)
    assert not os.listdir(tmp_path)
    assert rec["tree_json"] == str(tree_dir / "tree.json") and not rec["tree_written"]
    for x in rec["deploy"]:
        assert os.path.isabs(x["file"]) and os.path.exists(x["file"]), x
        assert x["run"] == deploy_line(x["target"], x["file"]), x
    rules = (tree_dir / "rules.conf").read_text()
    assert f"#   {deploy_line('ompi-rules', 'THIS_FILE')}\n" in rules
    assert (f"coll_tuned_dynamic_rules_filename {tree_dir}/rules.conf"
            in rec["deploy"][0]["run"])
    page = (report["dir"] / "index.html").read_text()
    box = page[page.index('id="recommended-tree"'):page.index('id="out-of-sample"')]
    for x in rec["deploy"]:
        assert x["emit"] is None or html.escape(x["emit"]) in box
        assert x["run"] is None or html.escape(x["run"] + " ./app") in box


def test_recommendation_names_its_methods(report):
    """The box names each method the recommended tree picks (Open MPI names here), with the
    cells it decides, counted again from the choice grid."""
    rep = report["json"]
    rec = rep["recommendation"]
    counts = {}
    for row in rec["choice"]:
        for k in row:
            counts[k] = counts.get(k, 0) + 1
    assert {m["index"]: m["cells"] for m in rec["methods"]} == counts
    assert sum(counts.values()) == rec["cells"]
    names = {m["index"]: m["name"] for m in rep["data"]["methods"]}
    assert all(m["name"] == names[m["index"]] for m in rec["methods"])
    page = html.unescape((report["dir"] / "index.html").read_text())
    box = page[page.index('id="recommended-methods"'):page.index('id="deploy"')]
    for m in rec["methods"]:
        assert f"{m['name']}</b> in {m['cells']} of {rec['cells']} cells" in box


def test_penalty_panels_titled_with_their_mean(report):
    """Each penalty panel's mean and max are its own grid's (recomputed here), and its SVG shows
    them in the title; a panel of zero penalty says '0 % everywhere'."""
    rep = report["json"]
    restricted = [p for p in rep["pictured"] if p["limit"] != "exact"]
    svg = (report["dir"] / "penalty.svg").read_text()
    for p in restricted:
        pens = [v for row in p["penalty"] for v in row if v is not None]
        (panel,) = p["panels"]
        assert panel["cells"] == len(pens)
        assert panel["mean"] == pytest.approx(statistics.fmean(pens), abs=1e-9)
        assert panel["max"] == pytest.approx(max(pens), abs=1e-9)
        assert f"<!-- mean {panel['mean']:.2f} %, max {panel['max']:.2f} % -->" in svg
    zero = [p for p in restricted if p["panels"][0]["max"] == 0]
    assert svg.count("<!-- 0 % everywhere -->") == len(zero)
