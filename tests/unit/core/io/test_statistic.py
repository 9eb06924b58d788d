"""What time_us means, as each source writes it (`# statistic=` in the core.io.statistic vocabulary,
the words under `statistic_detail=`), and the warning when a decision combines unlike tables."""
from pathlib import Path

import pytest

from collsel import cli
from collsel.core.io import statistic
from collsel.core.maps import table
from collsel.core.mpi.algorithms import Method
from collsel.core.io.files import write_file
from collsel.sources.measure import launchers
from collsel.sources.sweep import plan, run

FIX = Path("/work/shared/fixtures")
needs_fixtures = pytest.mark.skipif(not FIX.is_dir(), reason="shared fixtures not present")


def sweep_config(tmp_path, launches):
    return plan.Config(collective="bcast", out=str(tmp_path / "t.csv"), comm_sizes=[2, 4],
                       msg_sizes=[1, 1024], methods=[Method(0, 0), Method(3, 8192)],
                       launcher=launchers.LocalLauncher("mpirun", ncores=2),
                       bench_path="/nonexistent/collsel_bench", bench_args=[],
                       silence_timeout=10, launches=launches)


@pytest.mark.parametrize("launches, kind", [(3, "ranks:max reps:median launches:mean"),
                                            (1, "ranks:max reps:median launches:one")])
def test_sweep_header_statistic(tmp_path, launches, kind):
    meta = run.header_metadata(sweep_config(tmp_path, launches))
    assert meta["statistic"] == kind == statistic.parse(kind)
    assert meta["statistic_detail"].startswith("time_us = mean over launches of each launch's "
                                               "median")
    assert meta["methods"] == "0:ignore 3:pipeline/seg=8192"


def ingest(tmp_path, capsys, *args):
    out = tmp_path / "t.csv"
    status = cli.main(["ingest", *map(str, args), "--out", str(out), "--force"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return table.read_table(out).sources[0].metadata, captured.err


@needs_fixtures
def test_ingest_osu_kinds(tmp_path, capsys):
    osu = FIX / "osu/osu-broadcast-chain.txt"
    meta, err = ingest(tmp_path, capsys, osu, "--algorithm", "chain", "--comm-size", 8,
                       "--segsize", 0)
    assert err == ""
    assert meta["statistic"] == meta["source.1.statistic"] == "ranks:mean reps:mean launches:one"
    assert meta["source.1.statistic_detail"].startswith("OSU Avg Latency")
    meta, _ = ingest(tmp_path, capsys, osu, "--algorithm", "chain", "--comm-size", 8,
                     "--segsize", 0, "--statistic", "max")
    assert meta["statistic"] == "ranks:max reps:mean launches:one"
    meta, _ = ingest(tmp_path, capsys, osu, "--algorithm", "chain", "--comm-size", 8,
                     "--segsize", 0, "--statistic", "min")
    assert meta["statistic"] == "ranks:min reps:mean launches:one"


@needs_fixtures
def test_ingest_reprompi_kinds(tmp_path, capsys):
    per_rep = FIX / "reprompi/reprompi_allreduce_p4_per_rep.txt"
    meta, _ = ingest(tmp_path, capsys, per_rep, "--algorithm", "ring")
    assert meta["statistic"] == "ranks:max reps:median launches:one"
    assert "slowest-rank" in meta["source.1.statistic_detail"]
    meta, _ = ingest(tmp_path, capsys, per_rep, "--algorithm", "ring", "--statistic", "min")
    assert meta["statistic"] == "ranks:max reps:min launches:one"


@needs_fixtures
def test_ingest_other_formats_kinds(tmp_path, capsys):
    meta, _ = ingest(tmp_path, capsys, FIX / "ompi-collectives-tuning/detail.out",
                     "--collective", "gather", "--segsize", 0)
    assert meta["statistic"] == "ranks:mean reps:mean launches:mean"
    meta, _ = ingest(tmp_path, capsys, FIX / "skampi/manual_sec7.1_MPI_Bcast-length_excerpt.txt",
                     "--algorithm", 0, "--partial", "--duplicates", "mean")
    assert meta["statistic"] == "ranks:max reps:mean launches:one"
    assert "interquartile mean" in meta["source.1.statistic_detail"]
    csv = FIX / "datasets/trieste_tanjaderin_bcast_combined.csv"
    mapping = "comm_size=Processes,msg_size=Size,algorithm=Algorithm,time_us=Latency(us)"
    for kind, want in (("rank-mean", "ranks:mean reps:? launches:?"),
                       ("max", "ranks:max reps:? launches:?"), (None, "ranks:? reps:? launches:?")):
        extra = ["--kind", kind] if kind else []
        meta, _ = ingest(tmp_path, capsys, csv, "--map", mapping, "--collective", "bcast",
                         "--segsize", 0, *extra)
        assert meta["statistic"] == want


def write_table(path, comm_size, statistic_text):
    rows = [dict(collective="bcast", comm_size=comm_size, msg_size=m, algorithm=a, segsize=0,
                 time_us=t) for m in (8, 1024) for a, t in ((1, 10.0), (6, 5.0 + m / 100))]
    write_file(path, table.render_table(rows, {"source": "test", "statistic": statistic_text}))


def test_build_warns_when_tables_measure_different_statistics(tmp_path, capsys):
    a, b = tmp_path / "A.csv", tmp_path / "B.csv"
    write_table(a, 2, statistic.kind("max", "median", "mean"))      # a sweep
    write_table(b, 4, statistic.kind("mean", "mean", "one"))        # an OSU ingest
    status = cli.main(["build", str(a), str(b), "--collective", "bcast", "--max-depth", "2",
                       "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("collsel: warning:")]
    assert len(warnings) == 1 and "different statistics" in warnings[0]
    assert f"ranks:max reps:median launches:mean: {a}" in warnings[0]
    assert f"ranks:mean reps:mean launches:one: {b}" in warnings[0]
    # Same kinds, one of them in the sentence tables carried before the vocabulary: no warning.
    write_table(b, 4, "time_us = mean over launches of each launch's median per-repetition "
                      "runtime of one call")
    status = cli.main(["build", str(a), str(b), "--collective", "bcast", "--max-depth", "2",
                       "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 0 and "warning" not in err, err


@pytest.mark.parametrize("command", [
    ["stats", "--collective", "bcast", "--depths", "1", "--thresholds", "90"],
    ["report", "--collective", "bcast", "--depths", "1", "--thresholds", "90", "--quiet",
     "--out", "REPORT"],
    ["baseline", "--collective", "bcast"],
])
def test_every_command_that_combines_tables_warns(tmp_path, capsys, command):
    a, b = tmp_path / "A.csv", tmp_path / "B.csv"
    write_table(a, 2, statistic.kind("max", "median", "one"))
    write_table(b, 4, statistic.kind("min", "mean", "one"))
    argv = [command[0], str(a), str(b)] + [str(tmp_path / "r") if x == "REPORT" else x
                                           for x in command[1:]]
    status = cli.main(argv)
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if line.startswith("collsel: warning:")]
    assert len(warnings) == 1, err
    assert str(a) in warnings[0] and str(b) in warnings[0]
    # baseline has no algorithm-0 rows here: it still warns before it refuses the tables
    assert status == (2 if command[0] == "baseline" else 0), err
