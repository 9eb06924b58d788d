"""`collsel report` of a sweep with a probe_us column shows the probe-vs-latency section (the
paper's figure 2: plot and Pearson/Spearman per (P, m, method), core.evaluate.probe_latency), and a
report without one does not."""
import json

import pytest

from collsel.cli import main as cli

HEADER = "collective,comm_size,msg_size,algorithm,segsize,faninout"
# (launch, level, probe_us, {algorithm: median_us}): linear (1) wins quiet, binomial (6) loaded
LAUNCHES = [(1, "off", 100, {0: 30, 1: 10, 6: 20}), (2, "low", 200, {0: 50, 1: 30, 6: 25}),
            (3, "high", 900, {0: 130, 1: 95, 6: 45}), (4, "high", 1000, {0: 120, 1: 90, 6: 40})]


def sweep(tmp_path, probe):
    """TABLE and TABLE.launches; with `probe`, both carry probe_us (and load_level)."""
    extra = ",load_level,probe_us" if probe else ""
    journal = [f"{HEADER},launch,median_us{extra}"]
    rows = [f"{HEADER},time_us{extra}"]
    for launch, level, p, times in LAUNCHES:
        for m in (4096, 65536):
            for alg, t in times.items():
                z = f",{level},{p}" if probe else ""
                journal.append(f"bcast,4,{m},{alg},0,0,{launch},{t}{z}")
                if probe or launch == 1:     # one row per cell (and probe value)
                    rows.append(f"bcast,4,{m},{alg},0,0,{t}{z}")
    table = tmp_path / "b.csv"
    table.write_text("\n".join(rows) + "\n")
    (tmp_path / "b.csv.launches").write_text("\n".join(journal) + "\n")
    return str(table)


def report(tmp_path, table, *z):
    out = tmp_path / "report"
    assert cli(["report", table, "--collective", "bcast", *z, "--depths", "2", "--thresholds",
                "90", "--png", "--quiet", "--out", str(out)]) == 0
    return json.loads((out / "report.json").read_text()), (out / "index.html").read_text(), out


@pytest.mark.slow
def test_probe_section_in_report(tmp_path, capsys):
    doc, html, out = report(tmp_path, sweep(tmp_path, probe=True), "--z", "probe_us")
    section = doc["probe_latency"]
    capsys.readouterr()
    assert cli(["stats", str(tmp_path / "b.csv"), "--collective", "bcast", "--probe-latency",
                "--format", "json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    # the same coefficients as `collsel stats --probe-latency` (one implementation)
    assert [{k: g[k] for k in stats[0]} for g in section["groups"]] == stats
    assert len({g["method"] for g in section["groups"]}) == 3 and "default (0)" in html
    assert len(section["groups"]) == 6 and section["pairs"] == 24
    assert all(g["spearman"] == pytest.approx(0.8) for g in section["groups"])  # one swap
    # one panel per (P, m), the default's four launches in it
    assert [(p["comm_size"], p["msg_size"], len(p["probe_us"])) for p in section["panels"]] == \
        [(4, 4096, 4), (4, 65536, 4)]
    assert sorted(section["panels"][0]["level"]) == ["high", "high", "low", "off"]
    assert 'id="probe-latency"' in html and "probe-latency.png" in html
    assert (out / "probe-latency.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "probe-latency.svg").exists()
    # one decision-map panel set per probe bin is drawn too
    assert len(doc["data"]["axes"]) == 3 and doc["data"]["axes"][2]["name"] == "probe_us"


def test_no_probe_section_without_probe(tmp_path):
    doc, html, out = report(tmp_path, sweep(tmp_path, probe=False))
    assert doc["probe_latency"] is None
    assert 'id="probe-latency"' not in html and not (out / "probe-latency.png").exists()
