"""`collsel build --recommend`: deterministic, reproducible from its recorded command."""
import json
import shlex

from helpers import collsel


def test_recommend_same_bytes_and_recorded_command(tmp_path, tanjaderin):
    outs = []
    for name in ("a", "b"):
        r = collsel("build", tanjaderin["reduce"], "--collective", "reduce", "--recommend",
                    "--leaf", "penalty", "--out", tmp_path / name)
        assert r.returncode == 0, r.stderr
        assert "recommended:" in r.stdout and "out-of-sample" in r.stdout
        outs.append((tmp_path / name / "tree.json").read_bytes())
    assert outs[0] == outs[1]
    stats = json.loads((tmp_path / "a" / "stats.json").read_text())
    rec = stats["recommendation"]
    words = shlex.split(rec["command"])
    assert words[:2] == ["collsel", "build"] and "--recommend" in words
    again = collsel(*words[1:-1], tmp_path / "c")
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "c" / "tree.json").read_bytes() == outs[0]
    chosen = rec["path"][rec["step"]]
    assert chosen["leaves"] == stats["leaves"]
    best = min(s["out_of_sample"]["mean"] for s in rec["path"])
    assert chosen["out_of_sample"]["mean"] <= best + rec["budget"]
    assert chosen["out_of_sample"]["on_default_cells"]["mean"] <= rec["default"]["mean"]
    assert stats["out_of_sample"]["leave_one_P_out"]["tree"]["cells"] > 0


def test_recommend_refuses_limits(tmp_path, tanjaderin):
    r = collsel("build", tanjaderin["reduce"], "--collective", "reduce", "--recommend",
                "--max-depth", "3", "--out", tmp_path / "x")
    assert r.returncode == 2 and "--recommend" in r.stderr
