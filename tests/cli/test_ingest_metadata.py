"""Values the formats do not record: flags, --pattern, --manifest, their conflicts; the
mixed-statistic warning; the table reads back and `collsel build` consumes it."""
import json
from pathlib import Path

import pytest

from collsel import cli
from collsel.core.maps import table

FIX = Path("/work/shared/fixtures")
pytestmark = pytest.mark.skipif(not FIX.is_dir(), reason="shared fixtures not present")
CHAIN = FIX / "osu/osu-broadcast-chain.txt"
LINEAR = FIX / "osu/osu-broadcast-basic-linear.txt"
IMB42 = FIX / "imb/ompi-www_users_2010-07_13859_imb_bcast_np42.txt"
SKAMPI = FIX / "skampi/manual_sec7.1_MPI_Bcast-length_excerpt.txt"


def run(capsys, *args):
    status = cli.main(["ingest", *map(str, args)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("args,flag", [
    ([CHAIN, "--comm-size", 8, "--segsize", 0], "--algorithm"),
    ([CHAIN, "--algorithm", "chain", "--segsize", 0], "--comm-size"),
    ([CHAIN, "--algorithm", "chain", "--comm-size", 8], "--segsize"),   # chain segments
    ([FIX / "datasets/trieste_tanjaderin_bcast_combined.csv", "--segsize", 0, "--map",
      "comm_size=Processes,msg_size=Size,algorithm=Algorithm,time_us=Latency(us)"],
     "--collective"),
    ([FIX / "imb/IMB-MPI1_internode_juno_np2.txt", "--algorithm", 0], "--collective"),
])
def test_missing_value_names_the_flag(tmp_path, capsys, args, flag):
    out = tmp_path / "t.csv"
    status, _, err = run(capsys, *args, "--out", out)
    assert status == 2 and flag in err and err.count("\n") == 1 and not out.exists()
    assert f"{args[0]}:" in err


def test_non_segmenting_algorithm_needs_no_segsize(tmp_path, capsys):
    status, _, err = run(capsys, LINEAR, "--algorithm", "Basic Linear", "--comm-size", 8,
                         "--out", tmp_path / "t.csv")
    assert status == 0, err
    assert set(table.read_table(tmp_path / "t.csv").segsize.tolist()) == {0}


def test_conflicting_sources_are_an_error(tmp_path, capsys):
    status, _, err = run(capsys, CHAIN, "--pattern", "osu-broadcast-{algorithm}.txt",
                         "--algorithm", "binomial", "--comm-size", 8, "--segsize", 0,
                         "--out", tmp_path / "t.csv")
    assert status == 2 and "conflicting algorithm" in err and "--pattern" in err
    status, _, err = run(capsys, IMB42, "--algorithm", 0, "--comm-size", 8,
                         "--out", tmp_path / "t.csv")
    assert status == 2 and "comm_size 42 in the file, but --comm-size says 8" in err


def test_pattern_that_does_not_match(tmp_path, capsys):
    status, _, err = run(capsys, CHAIN, "--pattern", "osu-reduce-{algorithm}.txt",
                         "--comm-size", 8, "--out", tmp_path / "t.csv")
    assert status == 2 and "does not match --pattern" in err


def test_manifest_supplies_values(tmp_path, capsys):
    manifest = tmp_path / "runs.csv"
    manifest.write_text("# which run forced what\nfile,algorithm,comm_size,segsize\n"
                        f"{CHAIN},chain,8,0\n{LINEAR},1,8,\n")
    status, _, err = run(capsys, CHAIN, LINEAR, "--manifest", manifest,
                         "--out", tmp_path / "t.csv")
    assert status == 0, err
    t = table.read_table(tmp_path / "t.csv")
    assert len(t) == 42 and set(t.algorithm.tolist()) == {1, 2}
    assert "manifest" in t.sources[0].metadata["source.1.given.algorithm"]
    status, _, err = run(capsys, CHAIN, IMB42, "--manifest", manifest, "--check")
    assert status == 2 and "not listed in the --manifest" in err


def test_same_algorithm_twice_is_a_duplicate(tmp_path, capsys):
    status, _, err = run(capsys, CHAIN, LINEAR, "--algorithm", 2, "--comm-size", 8,
                         "--segsize", 0, "--out", tmp_path / "t.csv")
    assert status == 2 and "duplicate point" in err and str(LINEAR) in err


def test_mixed_statistics_warn_and_are_recorded(tmp_path, capsys):
    out = tmp_path / "t.csv"
    status, _, err = run(capsys, IMB42, SKAMPI, "--algorithm", 0, "--partial",
                         "--duplicates", "mean", "--out", out)
    assert status == 0
    assert err.startswith("collsel: warning: the tables measure different statistics")
    assert err.count("\n") == 1
    assert f"ranks:mean reps:mean launches:one: {IMB42}" in err
    assert f"ranks:max reps:mean launches:one: {SKAMPI}" in err
    meta = table.read_table(out).sources[0].metadata
    assert meta["statistic"] == "mixed"
    assert meta["source.1.statistic"] == "ranks:mean reps:mean launches:one"
    assert meta["source.2.statistic"] == "ranks:max reps:mean launches:one"
    assert "slowest rank" in meta["source.2.statistic_detail"]
    assert "interquartile mean" in meta["source.2.statistic_detail"]


def test_one_statistic_kind_gives_no_warning(tmp_path, capsys):
    status, _, err = run(capsys, CHAIN, LINEAR, "--pattern", "osu-broadcast-{algorithm}.txt",
                         "--comm-size", 8, "--segsize", 0, "--out", tmp_path / "t.csv")
    assert status == 0 and err == ""


def test_osu_table_builds_end_to_end(tmp_path, capsys):
    files = sorted((FIX / "osu").glob("osu-broadcast-*.txt"))
    out = tmp_path / "bcast.csv"
    status, _, err = run(capsys, *files, "--pattern", "osu-broadcast-{algorithm}.txt",
                         "--comm-size", 8, "--segsize", 0, "--out", out)
    assert status == 0, err
    if "build" not in cli.parser().format_help():
        pytest.skip("collsel build not registered yet")
    status = cli.main(["build", str(out), "--collective", "bcast", "--out", str(tmp_path / "o")])
    assert status == 0, capsys.readouterr().err
    tree = json.loads((tmp_path / "o/tree.json").read_text())
    assert tree
