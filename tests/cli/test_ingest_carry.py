"""`collsel ingest` keeps where the ranks ran (ppn, nodes) and any named column (--carry): from a
CSV's columns, per file from flags, --pattern or --manifest; such a column names the point, so
--duplicates never merges rows that differ in one (and a mutation of that rule is caught)."""
import shutil
from pathlib import Path

import pytest

from collsel import cli
from collsel.core.maps import table
from collsel.sources.ingest import output

MAP = "comm_size=P,msg_size=bytes,algorithm=alg,time_us=t(us)"
# Two measurements of each (P, m, algorithm): at ppn 1 on two nodes and at ppn 2 on one node,
# two runs each, on two fabrics for P = 4. Times differ in every row.
HEADER = "P,bytes,alg,t(us),N,PPN,fabric\n"
ROWS = ["2,8,binomial,10,2,1,eth", "2,8,binomial,30,1,2,eth",
        "2,8,binomial,12,2,1,eth", "2,8,binomial,34,1,2,eth",
        "4,8,binomial,40,2,2,eth", "4,8,binomial,70,2,2,ib"]
FIX = Path("/work/shared/fixtures")
OSU = FIX / "osu/osu-broadcast-chain.txt"


def run(capsys, *args):
    status = cli.main(["ingest", *map(str, args)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def csv(tmp_path):
    path = tmp_path / "nodes-ppn.csv"
    path.write_text(HEADER + "\n".join(ROWS) + "\n")
    return path


def ingest(capsys, tmp_path, *args):
    out = tmp_path / "t.csv"
    status, _, err = run(capsys, *args, "--collective", "bcast", "--segsize", 0, "--out", out,
                         "--force")
    assert status == 0, err
    return table.read_table(out)


def rows_of(t, *columns):
    return sorted(zip(t.comm_size.tolist(), *(t.column(c).tolist() for c in columns),
                      t.time_us.tolist()))


def test_map_ppn_and_nodes_become_integer_columns(capsys, tmp_path, csv):
    t = ingest(capsys, tmp_path, csv, "--duplicates", "first", "--map",
               f"{MAP},ppn=PPN,nodes=N")
    assert sorted(t.extra) == ["nodes", "ppn"]
    assert rows_of(t, "nodes", "ppn") == [(2, "1", "2", 30.0), (2, "2", "1", 10.0),
                                          (4, "2", "2", 40.0)]


def check_kept_apart(t, columns):
    """Every (P, carried values) of the input is a row of its own, with a time of its group."""
    groups = {}
    for line in ROWS:
        p, _, _, us, nodes, ppn, fabric = line.split(",")
        named = {"ppn": ppn, "nodes": nodes, "fabric": fabric}
        groups.setdefault((int(p), *(named[c] for c in columns)), []).append(float(us))
    got = {(p, *rest[:-1]): rest[-1] for p, *rest in rows_of(t, *columns)}
    assert sorted(got) == sorted(groups), "rows that differ in a carried column were merged"
    for key, us in groups.items():
        assert min(us) <= got[key] <= max(us), (key, got[key], us)


@pytest.mark.parametrize("policy", ["mean", "min", "first"])
def test_duplicates_never_merge_rows_that_differ_in_a_carried_column(capsys, tmp_path, csv,
                                                                     policy):
    t = ingest(capsys, tmp_path, csv, "--duplicates", policy, "--map", f"{MAP},ppn=PPN",
               "--carry", "fabric")
    check_kept_apart(t, ("ppn", "fabric"))
    assert len(t) == 4       # the two runs of (P 2, ppn 1) and of (P 2, ppn 2) did merge
    if policy == "mean":
        assert rows_of(t, "ppn", "fabric")[:2] == [(2, "1", "eth", 11.0), (2, "2", "eth", 32.0)]


def test_the_duplicates_check_fails_when_merging_ignores_carried_columns(capsys, tmp_path, csv,
                                                                         monkeypatch):
    """The mutation: points identified by the canonical key alone (the rule before ppn)."""
    monkeypatch.setattr(output, "identity", lambda row: tuple(row[k] for k in output.KEY))
    t = ingest(capsys, tmp_path, csv, "--duplicates", "mean", "--map", f"{MAP},ppn=PPN",
               "--carry", "fabric")
    with pytest.raises(AssertionError, match="were merged"):
        check_kept_apart(t, ("ppn", "fabric"))


def test_error_policy_names_the_carried_columns_of_a_true_duplicate(capsys, tmp_path, csv):
    status, _, err = run(capsys, csv, "--collective", "bcast", "--segsize", 0, "--map",
                         f"{MAP},ppn=PPN", "--carry", "fabric", "--out", tmp_path / "t.csv")
    assert status == 2 and err.count("\n") == 1
    assert f"{csv}:4: duplicate point" in err and "fabric=eth, ppn=1" in err


def test_carry_renames_and_keeps_text(capsys, tmp_path, csv):
    t = ingest(capsys, tmp_path, csv, "--duplicates", "first", "--map", f"{MAP},ppn=PPN",
               "--carry", "net=fabric")
    assert sorted(t.extra) == ["net", "ppn"] and set(t.column("net").tolist()) == {"eth", "ib"}


@pytest.mark.skipif(not OSU.is_file(), reason="shared fixtures not present")
def test_ppn_per_file_from_pattern_flag_and_manifest(capsys, tmp_path):
    files = []
    for ppn in (1, 2):
        files.append(tmp_path / f"osu-bcast-ppn{ppn}.txt")
        shutil.copy(OSU, files[-1])
    common = ("--comm-size", 8, "--algorithm", "chain")
    by_pattern = ingest(capsys, tmp_path, *files, *common, "--pattern", "osu-bcast-ppn{ppn}.txt")
    assert sorted(set(by_pattern.column("ppn").tolist())) == ["1", "2"]
    manifest = tmp_path / "manifest.csv"
    manifest.write_text("file,ppn,nodes\n" + "".join(
        f"{f.name},{ppn},{8 // ppn}\n" for f, ppn in zip(files, (1, 2))))
    by_manifest = ingest(capsys, tmp_path, *files, *common, "--manifest", manifest)
    assert rows_of(by_manifest, "ppn") == rows_of(by_pattern, "ppn")
    assert set(by_manifest.column("nodes").tolist()) == {"8", "4"}
    one = ingest(capsys, tmp_path, files[0], *common, "--ppn", 4)
    assert set(one.column("ppn").tolist()) == {"4"}
    # the same two files without ppn: every point twice
    status, _, err = run(capsys, *files, *common, "--collective", "bcast", "--segsize", 0,
                         "--out", tmp_path / "x.csv")
    assert status == 2 and "duplicate point" in err


@pytest.mark.parametrize("args,message", [
    (["--map", MAP, "--carry", "nosuch"], "--carry nosuch=nosuch: no column 'nosuch'"),
    (["--map", MAP, "--carry", "ppn"], "map it with --map ppn=COLUMN"),
    (["--map", MAP, "--carry", "time_us=fabric"], "map it with --map time_us=COLUMN"),
    (["--map", MAP, "--carry", "launches=fabric"], "collsel writes itself"),
    (["--map", MAP, "--carry", "a b=fabric"], "not a plain name"),
    (["--map", MAP, "--carry", "fabric,fabric"], "fabric given twice"),
    (["--carry", "fabric"], "--carry keeps columns of a CSV read with --map"),
    (["--map", f"{MAP},ppn=PPN", "--ppn", 3], "ppn 1 in the file, but --ppn says 3"),
    (["--map", f"{MAP},ppn=PPN", "--ppn", 0], "--ppn: ppn 0 out of range [1,"),
])
def test_bad_carry_and_layout_flags(capsys, tmp_path, csv, args, message):
    out = tmp_path / "t.csv"
    status, _, err = run(capsys, csv, "--collective", "bcast", "--segsize", 0,
                         "--duplicates", "first", *args, "--out", out)
    assert status == 2 and message in err and err.count("\n") == 1 and not out.exists(), err


@pytest.mark.parametrize("cell,message", [
    ("0", "ppn 0 out of range [1,"), ("", "empty ppn value"), ("x", "ppn 'x' is not an integer"),
])
def test_bad_ppn_values_are_located(capsys, tmp_path, cell, message):
    path = tmp_path / "bad.csv"
    path.write_text(HEADER + ROWS[0] + "\n" + f"2,16,binomial,10,2,{cell},eth\n")
    status, _, err = run(capsys, path, "--collective", "bcast", "--segsize", 0, "--map",
                         f"{MAP},ppn=PPN", "--out", tmp_path / "t.csv")
    assert status == 2 and f"{path}:3:" in err and message in err, err


@pytest.mark.parametrize("cell,message", [
    ("", "empty fabric value (--carry)"), ("e\x1bth", "printable characters (--carry)"),
])
def test_bad_carried_values_are_located(capsys, tmp_path, cell, message):
    path = tmp_path / "bad.csv"
    path.write_text(HEADER + f"2,16,binomial,10,2,1,{cell}\n")
    status, _, err = run(capsys, path, "--collective", "bcast", "--segsize", 0, "--map", MAP,
                         "--carry", "fabric", "--out", tmp_path / "t.csv")
    assert status == 2 and f"{path}:2:" in err and message in err and "\x1b" not in err, err


def test_inputs_must_carry_the_same_columns(capsys, tmp_path, csv):
    other = tmp_path / "no-ppn.csv"
    other.write_text("P,bytes,alg,t(us)\n2,64,binomial,10\n")
    status, _, err = run(capsys, csv, other, "--collective", "bcast", "--segsize", 0,
                         "--duplicates", "first", "--map", f"{MAP},ppn=PPN",
                         "--out", tmp_path / "t.csv")
    assert status == 2 and err.count("\n") == 1
    assert f"{other}:1: --map ppn=PPN: no column 'PPN'" in err, err


def test_a_file_without_the_column_a_flag_gives_others(capsys, tmp_path, csv):
    """--manifest gives ppn to one file only: the other's rows would lack it."""
    other = tmp_path / "no-ppn.csv"
    other.write_text("P,bytes,alg,t(us)\n2,64,binomial,10\n")
    manifest = tmp_path / "m.csv"
    manifest.write_text(f"file,ppn\n{csv.name},2\n{other.name},\n")
    status, _, err = run(capsys, csv, other, "--collective", "bcast", "--segsize", 0,
                         "--duplicates", "first", "--map", MAP, "--manifest", manifest,
                         "--out", tmp_path / "t.csv")
    assert status == 2 and err.count("\n") == 1
    assert f"{other}:2: no extra column, but {csv}:2: ppn" in err, err
