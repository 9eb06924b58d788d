"""Open MPI rules files: `collsel emit --target ompi-rules|ompi-json` and `collsel check-rules`.

Trees come from our measured sweeps in bench-data/. The validator is tested on one small file
per trap of the classic format (the reference's list), each rejected with one line FILE:LINE.
"""
import json
import re
from pathlib import Path

import numpy as np
import pytest

from collsel import cli
from helpers import run_in_process

from collsel.core.maps import decision_map, table
from collsel.core.trees import tree, treefile
from collsel.sinks.emit import ompi_rules, targets
from collsel.sinks.emit import ompi_rules_reader as check

REPO = Path(__file__).resolve().parents[4]


run = run_in_process    # `collsel ARGS` in this process (tests/helpers.py)


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    """{(collective, 'exact'|'depth3'): tree.json path} from bench-data."""
    d = tmp_path_factory.mktemp("trees")
    out = {}
    for coll in ("bcast", "reduce"):
        dmap = decision_map.build_map(
            table.read_tables([REPO / "bench-data" / f"{coll}-sweep.csv"]).select(coll))
        for name, depth in (("exact", None), ("depth3", 3)):
            t = tree.build_tree(dmap, tree.BuildOptions(max_depth=depth))
            doc = treefile.tree_document(dmap, t, tree.BuildOptions(max_depth=depth))
            path = d / f"{coll}-{name}.json"
            path.write_text(treefile.dumps(doc))
            out[coll, name] = path
    return out


def emit(paths, target="ompi-rules", ompi_comm_sizes=None, **options):
    """The target's one file; its notes printed as `collsel emit` prints them."""
    loaded = [treefile.load(p) for p in paths]
    result = targets.emit(target, loaded, targets.EmitOptions(
        ompi_comm_sizes=ompi_rules.parse_comm_sizes(ompi_comm_sizes), **options))
    for note in result.notes:
        print(f"rules: {note}")
    (text,) = result.files.values()
    return loaded, text


def probe_points(loaded):
    """Every grid point plus both sides of every cut, P 1..20."""
    p_axis, m_axis = loaded.axes
    ms = sorted({0, 1, *m_axis.values, *m_axis.cuts, *(c - 1 for c in m_axis.cuts), 1 << 40})
    ps = sorted({*range(1, 21), *p_axis.values})
    pv, mv = np.meshgrid(ps, ms, indexing="ij")
    return pv.ravel(), mv.ravel()


@pytest.mark.parametrize("kind", ["exact", "depth3"])
def test_rules_file_decides_what_the_tree_decides(trees, kind, capsys):
    loaded, text = emit([trees["bcast", kind], trees["reduce", kind]])
    out = capsys.readouterr().out
    assert re.search(r"bcast: \d+ communicator-size block\(s\), \d+ message rule\(s\); decides "
                     r"differently from the tree on 0 of 660 grid points \(0\.00%\)", out), out
    assert "reduce:" in out
    rules = check.read("f", text.encode(), (4, 1, 4))
    assert rules.errors == [] and not rules.rejected
    assert text.isascii() and not re.search(r"(^|\s)0\d", text.split("#")[0])
    for t in loaded:
        pv, mv = probe_points(t)
        want = [t.methods[i] for i in t.decide([pv, mv]).tolist()]
        coll_id = check.COLLECTIVE_IDS[t.collective]
        got = [rules.lookup(coll_id, p, m)[:3] for p, m in zip(pv.tolist(), mv.tolist())]
        assert got == [(w.algorithm, w.segsize, w.faninout) for w in want]
        blocks = rules.collectives[coll_id].blocks
        assert [b.comm_size for b in blocks] == sorted({b.comm_size for b in blocks})
        assert all(b.rules[0].msg_size == 0 for b in blocks)


def test_emit_is_deterministic_and_orders_collectives_by_id(trees, tmp_path):
    a, b = tmp_path / "a.conf", tmp_path / "b.conf"
    r1 = run("emit", "--target", "ompi-rules", trees["reduce", "depth3"],
             trees["bcast", "depth3"], "--out", a)
    r2 = run("emit", "--target", "ompi-rules", trees["bcast", "depth3"],
             trees["reduce", "depth3"], "--out", b)
    assert r1.returncode == 0 and r2.returncode == 0, r1.stderr + r2.stderr
    assert a.read_bytes() == b.read_bytes()
    body = [line.split("#")[0].split() for line in a.read_text().splitlines()]
    body = [x for x in body if x]
    assert body[0] == ["2"] and body[1] == ["7"]          # NCOL, then bcast (7) before reduce (11)
    assert ["11"] in body


def test_check_rules_query_agrees_with_collsel_query(trees, tmp_path):
    conf = tmp_path / "bcast.conf"
    assert run("emit", "--target", "ompi-rules", trees["bcast", "exact"],
               "--out", conf).returncode == 0
    loaded = treefile.load(trees["bcast", "exact"])
    pv, mv = probe_points(loaded)
    points = tmp_path / "points"
    points.write_text("".join(f"{p} {m}\n" for p, m in zip(pv.tolist(), mv.tolist())))
    ours = run("check-rules", conf, "--collective", "bcast", "--ids", "--points", points)
    theirs = run("query", trees["bcast", "exact"], "--ids", "--points", points)
    assert ours.returncode == 0 and theirs.returncode == 0, ours.stderr + theirs.stderr
    assert ours.stdout == theirs.stdout and ours.stdout.count("\n") == len(pv)
    r = run("check-rules", conf)
    assert r.returncode == 0 and "valid for Open MPI 4.1.4" in r.stdout and r.stderr == ""


def test_json_rules_are_explicit_inclusive_ranges(trees, capsys):
    loaded, text = emit([trees["bcast", "depth3"], trees["reduce", "depth3"]], "ompi-json")
    assert "differently from the tree on 0 of 660" in capsys.readouterr().out
    doc = json.loads(text)
    assert doc["rule_file_version"] == 3 and doc["module"] == "tuned"
    for t in loaded:
        comms = doc["collectives"][t.collective]
        assert comms[0]["comm_size_min"] == 0 and comms[-1]["comm_size_max"] == 2**31 - 1
        for a, b in zip(comms, comms[1:]):
            assert b["comm_size_min"] == a["comm_size_max"] + 1
        for c in comms:
            rules = c["rules"]
            assert rules[0]["msg_size_min"] == 0 and rules[-1]["msg_size_max"] == "inf"
            for a, b in zip(rules, rules[1:]):
                assert b["msg_size_min"] == a["msg_size_max"] + 1
            assert all("seg_size" in r and "segsize" not in r for r in rules)
        pv, mv = probe_points(t)
        want = [t.methods[i] for i in t.decide([pv, mv]).tolist()]
        got = [ompi_rules.json_lookup(doc, t.collective, p, m)
               for p, m in zip(pv.tolist(), mv.tolist())]
        assert got == [(w.algorithm, w.segsize, w.faninout) for w in want]


def test_chosen_blocks_lose_precision_and_say_how_much(trees, capsys):
    loaded, text = emit([trees["bcast", "exact"]], ompi_comm_sizes="2,4,8,16")
    out = capsys.readouterr().out
    m = re.search(r"bcast: 4 communicator-size block\(s\), \d+ message rule\(s\); decides "
                  r"differently from the tree on (\d+) of 660 grid points", out)
    assert m and int(m.group(1)) > 0, out
    rules = check.read("f", text.encode())
    assert rules.errors == []
    assert [b.comm_size for b in rules.collectives[7].blocks] == [2, 4, 8, 16]
    # at the block starts themselves the file follows the majority, so P=16 (alone) is exact
    t = loaded[0]
    ms = np.asarray(t.axes[1].values)
    want = [t.methods[i] for i in t.decide([np.full(len(ms), 16), ms]).tolist()]
    assert [rules.lookup(7, 16, int(x))[:3] for x in ms] == [
        (w.algorithm, w.segsize, w.faninout) for w in want]


def test_version_2_file(trees):
    _, text = emit([trees["bcast", "depth3"]], ompi_rules_version=2)
    assert text.startswith("rule-file-version-2\n")
    assert check.read("f", text.encode(), (4, 1, 8)).errors == []
    old = check.read("f", text.encode(), (4, 1, 4))
    assert old.rejected and old.errors[0][0] == 1


def test_emit_bad_input(trees, tmp_path):
    r = run("emit", "--target", "ompi-rules", trees["bcast", "exact"], trees["bcast", "depth3"],
            "--out", tmp_path / "x")
    assert r.returncode == 2 and "a second tree for bcast" in r.stderr and r.stderr.count("\n") == 1
    r = run("emit", "--target", "ompi-rules", trees["bcast", "exact"], "--ompi-comm-sizes",
            "4,2", "--out", tmp_path / "x")
    assert r.returncode == 2 and "strictly ascending" in r.stderr
    assert not (tmp_path / "x").exists()


# ---- the validator: one file per trap -------------------------------------------------------

GOOD = """\
# comment line
1
7 2
2 3
0 6 0 0
8192 3 0 65536
1048576 8 0 0
64 1
0 7 0 0
"""


def lines_replaced(**repl):
    lines = GOOD.splitlines()
    for k, v in repl.items():
        lines[int(k[1:]) - 1] = v
    return "\n".join(lines) + "\n"


# name -> (file text, --ompi-version, line of the first error, words the message must contain)
TRAPS = {
    "first_msg_size_not_0": (lines_replaced(l5="1 6 0 0"), "4.1.4", 5, "must be 0"),
    "nmsgsizes_too_large": (lines_replaced(l4="2 4"), "4.1.4", 8, "count above does not match"),
    "nmsgsizes_too_small": (lines_replaced(l4="2 2"), "4.1.4", 7, "count above does not match"),
    "ncomsizes_too_large": (lines_replaced(l3="7 3"), "4.1.4", 9, "file ends"),
    "ncol_too_small": (lines_replaced(l2="0"), "4.1.4", 3, "after the last"),
    "leading_zero": (lines_replaced(l6="08192 3 0 65536"), "4.1.4", 6, "leading zero"),
    "hexadecimal": (lines_replaced(l6="0x2000 3 0 65536"), "4.1.4", 6, "hexadecimal"),
    "version_line_not_at_byte_0": ("# rules\nrule-file-version-2\n" + GOOD, "4.1.8", 2,
                                   "very first bytes"),
    "version_line_leading_space": (" rule-file-version-2\n" + GOOD, "4.1.8", 1,
                                   "very first bytes"),
    "version_line_too_old": ("rule-file-version-2\n" + GOOD, "4.1.4", 1, "no version line"),
    "blocks_not_ascending": (lines_replaced(l8="1 1"), "4.1.4", 8, "blocks must ascend"),
    "msg_sizes_not_ascending": (lines_replaced(l7="4096 8 0 0"), "4.1.4", 7,
                                "rules must ascend"),
    "negative_number": (lines_replaced(l6="8192 3 0 -1"), "4.1.4", 6, "negative"),
    "text_outside_comment": (lines_replaced(l5="0 6 0 0 binomial"), "4.1.4", 5,
                             "outside a comment"),
    "not_an_integer": (lines_replaced(l6="8192 3 0 65536.5"), "4.1.4", 6, "not an integer"),
    "five_fields_in_version_1": (lines_replaced(l5="0 6 0 0 0"), "4.1.4", 5,
                                 "count above does not match"),
    "maxreq_on_next_line": ("rule-file-version-2\n" + lines_replaced(l5="0 6 0 0\n0"),
                            "4.1.8", 7, "count above does not match"),
    "duplicate_collective": (lines_replaced(l2="2") + "7 1\n2 1\n0 6 0 0\n", "4.1.4", 10,
                             "appears again"),
    "unknown_algorithm": (lines_replaced(l9="0 12 0 0"), "4.1.4", 9, "does not exist"),
    "too_many_collectives": (lines_replaced(l2="23"), "4.1.4", 2, "more than the 22"),
    "collective_id_out_of_range": (lines_replaced(l3="22 2"), "4.1.4", 3, "collective id 22"),
    "int_overflow": (lines_replaced(l6="8192 3 0 4294967296"), "4.1.4", 6, "does not fit"),
    "empty_file": ("# nothing\n", "4.1.4", 1, "file ends"),
}


@pytest.mark.parametrize("name", sorted(TRAPS))
def test_validator_rejects_trap(name, tmp_path, capsys):
    text, version, line, words = TRAPS[name]
    path = tmp_path / f"{name}.conf"
    path.write_text(text)
    assert cli.main(["check-rules", str(path), "--ompi-version", version]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(re.match(re.escape(str(path)) + r":\d+: \S", x) for x in lines), lines
    assert lines[0].startswith(f"{path}:{line}: ") and words in lines[0], lines


def test_validator_accepts_good_files(tmp_path, capsys):
    for text, version in ((GOOD, "4.1.4"), ("rule-file-version-2\n" + GOOD, "4.1.8"),
                          ("rule-file-version-2\n" + GOOD.replace(" 0 0\n", " 0 0 4\n"),
                           "5.0.7"),
                          (GOOD.replace("7 2\n", "7   # bcast\n2   # blocks\n"), "4.1.4")):
        path = tmp_path / "ok.conf"
        path.write_text(text)
        assert cli.main(["check-rules", str(path), "--ompi-version", version]) == 0
        r = capsys.readouterr()
        assert r.err == "" and "bcast (id 7): 2 communicator-size" in r.out, (text, r.err)


def test_evaluator_follows_open_mpi_scans():
    rules = check.read("f", ("rule-file-version-2\n" + GOOD.replace(" 0 0\n", " 0 0 4\n"))
                       .encode(), (5, 0, 7))
    assert rules.lookup(7, 1, 0) == (6, 0, 0, 4)           # below every block: the first
    assert rules.lookup(7, 63, 8191)[:3] == (6, 0, 0)
    assert rules.lookup(7, 63, 8192)[:3] == (3, 65536, 0)
    assert rules.lookup(7, 64, 1 << 30)[:3] == (7, 0, 0)
    assert rules.lookup(11, 8, 8) == (0, 0, 0, 0)          # no reduce rules: fixed decision
    # out of order: Open MPI stops at the first larger size, so the 4096 rule is never reached
    bad = check.read("f", lines_replaced(l6="8192 3 0 0", l7="4096 8 0 0").encode())
    assert bad.lookup(7, 2, 5000)[0] == 6 and bad.lookup(7, 2, 9000)[0] == 8
    # a rejected file means Open MPI's fixed decision everywhere
    assert check.read("f", lines_replaced(l5="1 6 0 0").encode()).lookup(7, 2, 0) == (0, 0, 0, 0)


@pytest.mark.parametrize("word,values", [("010", [8]), ("08", [0, 8]), ("0x10", [16]),
                                         ("1.5", [1, 5]), ("rule-file-version-2", [-2]),
                                         ("abc", []), ("-7", [-7]), ("+3", [3])])
def test_tokenizer_reads_like_fscanf_li(word, values):
    assert check.ompi_reads(word) == values
