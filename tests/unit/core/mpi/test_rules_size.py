"""core.mpi.rules_size: the message size Open MPI's dynamic decision matches a rule against, per
collective, checked against the source; the ompi-rules / ompi-json emitters write thresholds in
it and check-rules reads them back the same way (one multi-collective file, every collective's
tree decided again at and around every threshold); what a rules file cannot express (the count
ignored) is counted in the notes. The proof on real Open MPI: tests/forcing/test_rules_sizes.py."""
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from collsel import cli
from collsel.core.mpi import algorithms, rules_size
from collsel.core.trees import treefile
from collsel.sinks.emit import ompi_rules_reader as check
from helpers import switching_table

# Debian's Open MPI 4.1.4 source (mpi-builds/debian_source.sh, unpacked); a git clone of
# open-mpi/ompi for v5.0.10 and main
SOURCE_414 = Path(os.environ.get("COLLSEL_OMPI_SOURCE", "/tmp/ompisrc/src"))
OMPI_GIT = os.environ.get("COLLSEL_OMPI_GIT", "/work/.mirror/open-mpi+ompi/repo")
DYNAMIC = "ompi/mca/coll/tuned/coll_tuned_decision_dynamic.c"


def _sources():
    out = {}
    if (SOURCE_414 / DYNAMIC).is_file():
        out["line_414"] = (SOURCE_414 / DYNAMIC).read_text()
    for field, tag in (("line_5010", "v5.0.10"), ("line_main", "main")):
        done = subprocess.run(["git", "-C", OMPI_GIT, "show", f"{tag}:{DYNAMIC}"],
                              capture_output=True, text=True)
        if done.returncode == 0:
            out[field] = done.stdout
    return out


def _relation_of(text, collective):
    """The relation a source line says, read independently of the table."""
    if "comsize" in text and "count" in text or "rcount * size" in text:
        return rules_size.TIMES_P
    if text == "dsize *= comsize;" or text.startswith("0,"):
        # barrier has no m (0 in the tree too): the same size
        return rules_size.IDENTITY if collective == "barrier" else rules_size.IGNORED
    return rules_size.IDENTITY


@pytest.mark.parametrize("field", ["line_414", "line_5010", "line_main"])
def test_the_table_is_what_the_dynamic_decision_computes(field):
    text = _sources().get(field)
    if text is None:
        pytest.skip(f"no Open MPI source for {field} (COLLSEL_OMPI_SOURCE, COLLSEL_OMPI_GIT)")
    lines = text.splitlines()
    starts = {m[1]: i + 1 for i, line in enumerate(lines)
              for m in [re.search(r"ompi_coll_tuned_(\w+)_intra_dec_dynamic\s*\(", line)]
              if m and not line.lstrip().startswith(("*", "return"))}
    assert sorted(rules_size.SOURCE) == sorted(algorithms.ALGORITHMS)
    for coll, source in rules_size.SOURCE.items():
        line = getattr(source, field)
        following = [s for s in starts.values() if s > starts[coll]]
        assert starts[coll] < line < min(following, default=len(lines) + 1), coll
        assert source.text in lines[line - 1], (coll, lines[line - 1])
        assert source.relation == _relation_of(source.text, coll), coll


def test_rule_sizes():
    assert rules_size.rule_msg_size("alltoall", 4, 512) == 2048
    assert rules_size.rule_msg_size("reduce_scatter_block", 8, 3) == 24
    assert rules_size.rule_msg_size("bcast", 4, 512) == 512
    assert rules_size.rule_msg_size("allgatherv", 4, 512) == 512
    assert rules_size.rule_msg_size("scan", 4, 512) == 4
    assert rules_size.rule_msg_size("alltoallv", 4, 512) == 0
    assert rules_size.rule_msg_size("gatherv", 4, 512) == 512


def run(capsys, *argv):
    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def _tree(tmp_path, capsys, coll, **table):
    low, high = sorted(algorithms.ALGORITHMS[coll])[1:3]
    path = switching_table(tmp_path / f"{coll}.csv", coll, low, high, **table)
    status, _, err = run(capsys, "build", path, "--out", tmp_path / coll)
    assert status == 0, err
    return tmp_path / coll / "tree.json"


def _points(tree):
    """(P, m) at and around every threshold of the tree, every P up to past the largest."""
    p_axis, m_axis = tree.axes[:2]
    ms = sorted({0, *m_axis.values, *(c + d for c in m_axis.cuts for d in (-1, 0, 1))})
    return [(p, m) for p in range(1, int(max(p_axis.values)) + 1) for m in ms]


@pytest.mark.parametrize("target", ["ompi-rules", "ompi-json"])
def test_one_file_for_every_collective_decides_as_the_trees(tmp_path, capsys, target):
    paths = {c: _tree(tmp_path, capsys, c, comm_sizes=(2, 3, 5, 8))
             for c in algorithms.ALGORITHMS if c != "barrier"}
    out = tmp_path / "rules"
    status, said, err = run(capsys, "emit", "--target", target, *paths.values(), "--out", out)
    assert status == 0, err
    for coll, path in paths.items():
        tree = treefile.load(path)
        points = _points(tree)
        (tmp_path / "points").write_text("".join(f"{p} {m}\n" for p, m in points))
        status, got, err = run(capsys, "check-rules", out, "--collective", coll, "--points",
                               tmp_path / "points", "--ids")
        assert status == 0, err
        want = [f"{w.algorithm} {w.segsize} {w.faninout}" for w in
                (tree.methods[i] for i in tree.decide(tuple(zip(*points))).tolist())]
        if rules_size.relation(coll) == rules_size.IGNORED:
            # one rule per block: the tree's m split is not expressible, and said so
            assert len(set(got.split("\n")[:-1])) == 1, coll
            assert f"{coll}: Open MPI's dynamic decision does not read the count" in said
            assert "changes with m at 4 of 4 measured P" in said
            continue
        assert got.split("\n")[:-1] == want, coll
        assert f"{coll}: " in said
    assert said.count("decides differently from the tree on 0 of") == 10, said
    assert said.count("Open MPI matches rules at P · m") == 5


def test_the_thresholds_are_p_times_the_trees_cut(tmp_path, capsys):
    tree = _tree(tmp_path, capsys, "alltoall")
    cut = treefile.load(tree).axes[1].cuts[1]
    out = tmp_path / "rules.conf"
    status, said, err = run(capsys, "emit", "--target", "ompi-rules", tree, "--out", out)
    assert status == 0, err
    rules = check.read(str(out), out.read_bytes())
    block = {b.comm_size: [r.msg_size for r in b.rules] for b in rules.collectives[3].blocks}
    assert block == {p: [0, p * cut] for p in range(1, 9)}   # one block per P up to 8
    assert "alltoall: 8 communicator-size block(s), 16 message rule(s); decides differently " \
           "from the tree on 0 of 12 grid points" in said
    # check-rules answers at collsel's m and names the size Open MPI matches
    status, text, err = run(capsys, "check-rules", out, "--collective", "alltoall", "--query",
                            "4", str(cut - 1))
    assert text.startswith(f"P=4 m={cut - 1} (rule size {4 * cut - 4}): ")


def test_chosen_blocks_convert_at_their_median_measured_p(tmp_path, capsys):
    tree = _tree(tmp_path, capsys, "gather", comm_sizes=(2, 4, 8, 16))
    cut = treefile.load(tree).axes[1].cuts[1]
    out = tmp_path / "rules.json"
    status, said, err = run(capsys, "emit", "--target", "ompi-json", tree, "--out", out,
                            "--ompi-comm-sizes", "1,5")
    assert status == 0, err
    blocks = json.loads(out.read_text())["collectives"]["gather"]
    # [1, 4]: measured P 2 and 4, the lower median 2; [5, ...): 8 and 16, 8
    assert [b["rules"][1]["msg_size_min"] for b in blocks] == [2 * cut, 8 * cut]
    low, high = (str(a) for a in sorted(algorithms.ALGORITHMS["gather"])[1:3])

    def alg(p, m):
        status, text, err = run(capsys, "check-rules", out, "--collective", "gather", "--query",
                                str(p), str(m), "--ids")
        assert status == 0, err
        return text.split()[0]
    # exact at the P it converted at; inside the block elsewhere only on the measured m
    assert (alg(2, cut - 1), alg(2, cut), alg(8, cut - 1), alg(8, cut)) == (low, high, low, high)
    assert alg(4, cut - 1) == high
    assert "gather: 2 communicator-size block(s), 4 message rule(s); decides differently from " \
           "the tree on 0 of 16 grid points" in said


def test_check_rules_scores_a_table_at_its_own_m(tmp_path, capsys):
    """The file of alltoall's exact tree picks the best measured method on every cell of the
    table it came from: check-rules --table reads the file at P · m too."""
    table = switching_table(tmp_path / "alltoall.csv", "alltoall", 2, 3)
    tree = _tree(tmp_path, capsys, "alltoall")
    out = tmp_path / "rules.conf"
    assert run(capsys, "emit", "--target", "ompi-rules", tree, "--out", out)[0] == 0
    status, text, err = run(capsys, "check-rules", out, "--table", table)
    assert status == 0, err
    assert "this file: penalty mean 0.00%, median 0.00%, max 0.00% on 12 cells; the best on " \
           "12" in text


def test_a_tree_measured_at_many_ranks_keeps_the_file_bounded(tmp_path, capsys):
    """P-scaled collectives get one exact block per P only up to EXACT_P_LIMIT; above it one
    block per P cell of the tree (a tree measured at 100,000 ranks must not write 100,000
    blocks), and the notes say where the file stops being exact."""
    from collsel.sinks.emit import ompi_rules
    tree = _tree(tmp_path, capsys, "alltoall", comm_sizes=(2, 4000, 100000))
    out = tmp_path / "rules.conf"
    status, said, err = run(capsys, "emit", "--target", "ompi-rules", tree, "--out", out)
    assert status == 0, err
    rules = check.read(str(out), out.read_bytes())
    starts = [b.comm_size for b in rules.collectives[3].blocks]
    assert len(starts) <= ompi_rules.EXACT_P_LIMIT + 2
    assert starts[:3] == [1, 2, 3] and starts[-1] > ompi_rules.EXACT_P_LIMIT
    assert f"at most {ompi_rules.EXACT_P_LIMIT}" in said
