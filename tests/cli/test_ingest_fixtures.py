"""Every shared fixture that holds collective timings goes through `collsel ingest`; expected
counts, P, m and methods were read from the files by hand (see the comments)."""
from pathlib import Path

import pytest

from collsel import cli
from collsel.core.maps import table

FIX = Path(__file__).resolve().parents[3] / "shared" / "fixtures"
if not FIX.is_dir():
    FIX = Path("/work/shared/fixtures")
pytestmark = pytest.mark.skipif(not FIX.is_dir(), reason="shared fixtures not present")
MAP = "comm_size=Processes,msg_size=Size,algorithm=Algorithm,time_us=Latency(us)"
POW2 = lambda lo, hi: {2**k for k in range(lo, hi + 1)}  # noqa: E731


def ingest(tmp_path, capsys, *args):
    out = tmp_path / "t.csv"
    status = cli.main(["ingest", *map(str, args), "--out", str(out), "--force"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return table.read_table(out), captured.err, out


def rows_at(t, **where):
    keep = [all(getattr(t, k)[i] == v for k, v in where.items()) for i in range(len(t))]
    return t.take(keep)


def test_ten_osu_files_make_one_table_with_ten_methods(tmp_path, capsys):
    files = sorted((FIX / "osu").glob("osu-broadcast-*.txt"))
    assert len(files) == 10
    t, err, out = ingest(tmp_path, capsys, *files, "--pattern", "osu-broadcast-{algorithm}.txt",
                         "--comm-size", 8, "--segsize", 0)
    assert err == ""                                   # one statistic kind: no warning
    # 21 sizes x 10 algorithms, less the 7 rows where Open MPI silently ran another algorithm
    # (core/mpi/fallbacks.py): split_bintree at 1 B, scatter_allgather(_ring) at m < P = 8
    assert len(t) == 210 - 7
    assert set(t.comm_size.tolist()) == {8}
    assert set(t.msg_size.tolist()) == POW2(0, 20)     # 1 .. 1048576
    assert set(t.algorithm.tolist()) == set(range(10))
    assert set(t.collective.tolist()) == {"bcast"}
    chain = rows_at(t, algorithm=2, msg_size=4096)     # osu-broadcast-chain.txt line 16
    assert chain.time_us.tolist() == [85.44]
    assert chain.extra["n"].tolist() == ["1000"]
    assert rows_at(t, algorithm=2, msg_size=16384).extra["n"].tolist() == ["100"]
    meta = t.sources[0].metadata
    assert meta["statistic"] == "ranks:mean reps:mean launches:one"
    assert meta["source.4.file"].endswith("osu-broadcast-chain.txt")
    assert meta["source.4.statistic"] == "ranks:mean reps:mean launches:one"
    assert "Avg" in meta["source.4.statistic_detail"]


def test_osu_max_statistic_takes_the_slowest_rank(tmp_path, capsys):
    t, _, _ = ingest(tmp_path, capsys, FIX / "osu/osu-broadcast-chain.txt", "--algorithm", "chain",
                     "--comm-size", 8, "--segsize", 0, "--statistic", "max")
    assert rows_at(t, msg_size=1).time_us.tolist() == [103.87]
    assert t.sources[0].metadata["statistic"] == "ranks:max reps:mean launches:one"


def test_imb_full_run_bcast_and_reduce_blocks(tmp_path, capsys):
    f = FIX / "imb/IMB-MPI1_internode_juno_np2.txt"
    bcast, _, _ = ingest(tmp_path, capsys, f, "--collective", "bcast", "--algorithm", 0)
    assert len(bcast) == 24                            # 0 and 1 .. 4194304
    assert set(bcast.msg_size.tolist()) == {0} | POW2(0, 22)
    assert set(bcast.comm_size.tolist()) == {2}
    assert rows_at(bcast, msg_size=1).time_us.tolist() == [155.37]
    reduce, _, _ = ingest(tmp_path, capsys, f, "--collective", "reduce", "--algorithm", 0)
    assert len(reduce) == 22                           # MPI_FLOAT: 0, 4 .. 4194304
    assert set(reduce.msg_size.tolist()) == {0} | POW2(2, 22)
    r = rows_at(reduce, msg_size=65536)                # repetitions drop to 640 here
    assert r.time_us.tolist() == [840.75] and r.extra["n"].tolist() == ["640"]


def test_imb_p42_time_limited_repetitions(tmp_path, capsys):
    f = FIX / "imb/ompi-www_users_2010-07_13859_imb_bcast_np42.txt"
    t, _, _ = ingest(tmp_path, capsys, f, "--algorithm", "default", "--statistic", "max")
    assert len(t) == 24 and set(t.comm_size.tolist()) == {42}
    r = rows_at(t, msg_size=131072)
    assert r.time_us.tolist() == [17647.29] and r.extra["n"].tolist() == ["299"]
    assert set(t.algorithm.tolist()) == {0}


def test_reprompi_per_repetition_rows_are_summarised(tmp_path, capsys):
    t, _, _ = ingest(tmp_path, capsys, FIX / "reprompi/reprompi_allreduce_p4_per_rep.txt",
                     "--algorithm", 0)
    assert len(t) == 5 and set(t.comm_size.tolist()) == {4}
    assert set(t.msg_size.tolist()) == {1, 10, 100, 1000, 10000}
    assert set(t.collective.tolist()) == {"allreduce"}
    # the ten runtime_sec values of count 1, lines 20-29, in µs
    reps = [10.9819, 3.0911, 2.9809, 2.7870, 2.7970, 3.0100, 3.1460, 4.1078, 5.2340, 2.9281]
    one = rows_at(t, msg_size=1)
    assert one.time_us[0] == pytest.approx(sorted(reps)[4] / 2 + sorted(reps)[5] / 2)
    assert float(one.extra["min_us"][0]) == pytest.approx(min(reps))
    assert float(one.extra["max_us"][0]) == pytest.approx(max(reps))
    assert float(one.extra["mean_us"][0]) == pytest.approx(sum(reps) / 10)
    assert one.extra["n"].tolist() == ["10"]
    assert "slowest-rank" in t.sources[0].metadata["source.1.statistic_detail"]
    assert t.sources[0].metadata["statistic"] == "ranks:max reps:median launches:one"


def test_reprompi_summary(tmp_path, capsys):
    t, _, _ = ingest(tmp_path, capsys, FIX / "reprompi/reprompi_allreduce_p4_summary.txt",
                     "--algorithm", "ring", "--statistic", "mean")
    # 5 sizes, less the smallest (m < P: Open MPI's ring runs recursive doubling there, so
    # the row is dropped when read: core/mpi/fallbacks.py)
    assert len(t) == 4 and set(t.algorithm.tolist()) == {4}
    r = rows_at(t, msg_size=10000)                     # mean_sec 0.0000719138
    assert r.time_us[0] == pytest.approx(71.9138)
    assert float(r.extra["median_us"][0]) == pytest.approx(30.3395)


def test_skampi_manual_excerpt_old_form(tmp_path, capsys):
    f = FIX / "skampi/manual_sec7.1_MPI_Bcast-length_excerpt.txt"
    t, _, _ = ingest(tmp_path, capsys, f, "--algorithm", 0, "--partial", "--duplicates", "mean")
    # 11 data lines, count=1 measured twice at nodes=2 (sqrt(2) loop): 10 points
    assert len(t) == 10
    assert set(t.comm_size.tolist()) == {2, 3, 4}
    assert set(t.msg_size.tolist()) == {4, 8, 12, 256, 364, 512, 724, 1024}
    assert rows_at(t, comm_size=4, msg_size=1024).time_us.tolist() == [508.0]
    assert rows_at(t, comm_size=2, msg_size=4).time_us[0] == pytest.approx((67.3 + 63.8) / 2)


def test_skampi_duplicate_needs_a_policy(capsys):
    f = FIX / "skampi/manual_sec7.1_MPI_Bcast-length_excerpt.txt"
    assert cli.main(["ingest", str(f), "--algorithm", "0", "--partial", "--check"]) == 2
    err = capsys.readouterr().err
    assert f"{f}:3: duplicate point" in err and f"{f}:2" in err and "--duplicates" in err


def test_skampi_new_form_with_procs_loop(tmp_path, capsys):
    """The current `# begin result` form, written here from the format description."""
    sko = tmp_path / "bcast.sko"
    sko.write_text('# SKaMPI Version 5.0.4 rev. 0\n\n# begin result "MPI_Bcast-procs-length"\n'
                   "procs= 2 count= 1        4       6.0       0.1       16       5.7       6.0\n"
                   "procs= 3 count= 1        4       7.5       0.2       16       5.7       6.0"
                   "       7.5\n"
                   '# end result "MPI_Bcast-procs-length"\n# duration = 0.01 sec\n')
    t, _, _ = ingest(tmp_path, capsys, sko, "--algorithm", "binomial", "--segsize", 0)
    assert t.comm_size.tolist() == [2, 3] and t.time_us.tolist() == [6.0, 7.5]


def test_skampi_pt2pt_demo_is_not_a_collective(tmp_path, capsys):
    f = FIX / "skampi/demo.sko"
    assert cli.main(["ingest", str(f), "--algorithm", "0", "--check"]) == 0   # reported
    out = tmp_path / "t.csv"
    assert cli.main(["ingest", str(f), "--algorithm", "0", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "Pingpong_Send_Recv" in err and "--collective" in err
    assert not out.exists()


@pytest.mark.parametrize("name,collective,rows,methods", [
    ("bcast", "bcast", 640, {0, 1, 3, 6}),     # Default, Basic Linear, Pipeline, Binomial
    # Default, Linear, Binomial, Rabenseifner; Rabenseifner's 28 rows at m < P dropped when read
    # (it runs basic_linear there, core/mpi/fallbacks.py)
    ("reduce", "reduce", 639 - 28, {0, 1, 5, 7}),
])
def test_tanjaderin_csv_through_map(tmp_path, capsys, name, collective, rows, methods):
    f = FIX / f"datasets/trieste_tanjaderin_{name}_combined.csv"
    t, _, _ = ingest(tmp_path, capsys, f, "--map", MAP, "--collective", collective,
                     "--segsize", 0, "--kind", "rank-mean")
    assert len(t) == rows
    assert set(t.comm_size.tolist()) == POW2(1, 8)
    assert set(t.msg_size.tolist()) == POW2(1, 20)
    assert set(t.algorithm.tolist()) == methods
    if name == "reduce":   # Linear lacks P=256, 1 MiB; the other three have it
        big = rows_at(t, comm_size=256, msg_size=1048576)
        assert sorted(big.algorithm.tolist()) == [0, 5, 7]
        assert rows_at(big, algorithm=0).time_us.tolist() == [950.42]


def test_ompi_collectives_tuning_detail(tmp_path, capsys):
    f = FIX / "ompi-collectives-tuning/detail.out"
    t, _, _ = ingest(tmp_path, capsys, f, "--collective", "gather", "--segsize", 0)
    assert len(t) == 168                               # 2 P x 21 sizes x 4 columns
    assert set(t.comm_size.tolist()) == {2, 4}
    assert set(t.algorithm.tolist()) == {0, 1, 2, 3}   # tuned, basic_linear, binomial, sync
    r = rows_at(t, comm_size=2, msg_size=1, algorithm=3)
    assert r.time_us.tolist() == [2393.96] and float(r.extra["stdev_us"][0]) == 35.23


@pytest.mark.parametrize("name", ["ompi-collectives-tuning/best.out", "osu/info.txt"])
def test_files_without_raw_timings_are_refused_clearly(name, capsys):
    assert cli.main(["ingest", "--check", str(FIX / name), "--collective", "gather"]) == 2
    assert str(FIX / name) in capsys.readouterr().err


def test_check_reports_without_writing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    f = FIX / "imb/IMB-MPI1_internode_juno_np2.txt"
    assert cli.main(["ingest", "--check", str(f)]) == 0
    out = capsys.readouterr().out
    # Allgather(v), Alltoall(v), Bcast, Gather, Scatter 7 x 24 (0, 1 .. 4 MiB) + Allreduce,
    # Reduce, Reduce_scatter 3 x 22 (0, 4 .. 4 MiB) + Barrier 1
    assert "format imb" in out and "235 points" in out
    assert "allgather/allgatherv/allreduce/alltoall/alltoallv/barrier/bcast/gather/reduce/" \
        "reduce_scatter/scatter" in out
    assert "gatherv, scatterv" in out                  # not among the 14 coll/tuned collectives
    assert "P 2," in out and "m 0..4194304 B" in out and "missing: algorithm" in out
    assert "PingPong" in out
    assert list(tmp_path.iterdir()) == []


def test_imb_4_1_reduce_scatter_splits_bytes(tmp_path, capsys):
    """IMB before 2019 Update 1 splits #bytes over the ranks: m = #bytes (IMB 4.1 header)."""
    f = FIX / "imb/IMB-MPI1_internode_juno_np2.txt"
    t, _, _ = ingest(tmp_path, capsys, f, "--collective", "reduce_scatter", "--algorithm", 0)
    assert set(t.msg_size.tolist()) == {0} | POW2(2, 22)
    meta = t.sources[0].metadata
    assert meta["source.1.imb_version"] == "4.1"
    assert meta["source.1.msg_size_is"].startswith("#bytes (split over the ranks")


# IMB-MPI1 2021.11 run here (tests/data/ingest/imb/PROVENANCE): every benchmark at P = 3 and 4,
# #bytes 0, 1 .. 65536 (reductions 0, 4 .. 65536). Per collective: the m of #bytes = 1024 at P = 4
# after conversion (sources.ingest.msgsize), and that row's t_avg and line in the file.
IMB_RUN = Path(__file__).parents[1] / "data" / "ingest" / "imb" / "IMB-MPI1_2021.11_np4_npmin3.txt"
BYTES = {0} | POW2(0, 16)
FLOATS = {0} | POW2(2, 16)
IMB_CASES = [   # collective, m values at P = 4, m of 1024 at P = 4, t_avg, line
    ("allreduce", FLOATS, 1024, 8.37, 78),
    ("allgather", BYTES, 1024, 6.87, 127),
    ("allgatherv", BYTES, 1024, 7.04, 176),
    ("alltoall", BYTES, 1024, 6.32, 225),
    ("alltoallv", BYTES, 1024, 6.17, 274),
    ("reduce_scatter", {4 * b for b in FLOATS}, 4096, 26.51, 319),   # P x #bytes
    ("reduce_scatter_block", FLOATS, 1024, 7.23, 364),
    ("gather", BYTES, 1024, 75.02, 413),
    ("scatter", BYTES, 1024, 37.16, 462),
    ("bcast", BYTES, 1024, 1.82, 526),
    ("reduce", FLOATS, 1024, 92.49, 571),
]


@pytest.mark.parametrize("collective,m_values,m,t_avg,line", IMB_CASES)
def test_imb_run_here_every_collective(tmp_path, capsys, collective, m_values, m, t_avg, line):
    t, err, _ = ingest(tmp_path, capsys, IMB_RUN, "--collective", collective, "--algorithm", 0)
    assert err == ""
    assert set(t.collective.tolist()) == {collective}
    assert set(t.comm_size.tolist()) == {3, 4}
    four = rows_at(t, comm_size=4)
    assert set(four.msg_size.tolist()) == m_values
    row = rows_at(four, msg_size=m)
    assert row.time_us.tolist() == [t_avg]
    assert row.extra["n"].tolist() == ["20"]
    assert IMB_RUN.read_text().splitlines()[line - 1].split()[-1] == f"{t_avg:.2f}"
    assert "msg_size_is" in "".join(t.sources[0].metadata)


def test_imb_run_here_reduce_scatter_at_p3_is_three_blocks(tmp_path, capsys):
    t, _, _ = ingest(tmp_path, capsys, IMB_RUN, "--collective", "reduce_scatter", "--algorithm", 0)
    three = rows_at(t, comm_size=3)
    assert set(three.msg_size.tolist()) == {3 * b for b in FLOATS}
    assert rows_at(three, msg_size=3 * 1024).time_us.tolist() == [6.68]    # line 297


def test_imb_run_here_barrier_has_no_size(tmp_path, capsys):
    t, _, _ = ingest(tmp_path, capsys, IMB_RUN, "--collective", "barrier", "--algorithm", 0,
                     "--statistic", "max")
    assert t.comm_size.tolist() == [3, 4] and t.msg_size.tolist() == [0, 0]
    assert t.time_us.tolist() == [4.61, 4.66]          # t_max, lines 476 and 483


def test_imb_run_here_check_lists_every_collective(capsys):
    assert cli.main(["ingest", "--check", str(IMB_RUN)]) == 0
    out = capsys.readouterr().out
    assert "allgather/allgatherv/allreduce/alltoall/alltoallv/barrier/bcast/gather/reduce/" \
        "reduce_scatter/reduce_scatter_block/scatter" in out
    assert "P 3..4" in out


def test_file_of_another_collective_is_refused(tmp_path, capsys):
    out = tmp_path / "t.csv"
    f = FIX / "osu/osu-broadcast-chain.txt"
    status = cli.main(["ingest", str(f), "--collective", "allreduce", "--algorithm", "0",
                       "--comm-size", "8", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2 and len(err.splitlines()) == 1
    assert f"{f}:4: no allreduce results: the file holds bcast, not the allreduce that " \
        "--collective asks for" in err
    assert not out.exists()


def test_imb_reduce_scatter_without_version_is_refused(tmp_path, capsys):
    """Which IMB wrote a Reduce_scatter block decides what #bytes means: no header, no guess."""
    text = IMB_RUN.read_text()
    start = text.index("# Benchmarking Reduce_scatter \n")
    blocks = text[start:text.index("# Benchmarking Reduce_scatter_block")]
    cut = tmp_path / "rs.txt"
    cut.write_text(f"{blocks}# All processes entering MPI_Finalize\n")
    out = tmp_path / "t.csv"
    assert cli.main(["ingest", str(cut), "--algorithm", "0", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "Reduce_scatter without IMB's version header" in err and len(err.splitlines()) == 1
    assert not out.exists()


# OSU 7.4 run here under Open MPI 4.1.4 (tests/data/ingest/osu/PROVENANCE), P = 4, Size 1 .. 65536
# (barrier: no Size). Per collective: the m values after conversion, the m of Size 1024 and its
# Avg Latency and line.
OSU_RUN = Path(__file__).parents[1] / "data" / "ingest" / "osu"
OSU_CASES = [   # collective, m values, m of Size 1024, Avg Latency, line
    ("allreduce", POW2(0, 16), 1024, 14.43, 15),
    ("allgather", POW2(0, 16), 1024, 21.58, 15),
    ("allgatherv", POW2(0, 16), 1024, 36.56, 15),
    ("alltoall", POW2(0, 16), 1024, 12.05, 15),
    ("alltoallv", POW2(0, 16), 1024, 9.62, 15),
    ("gather", POW2(0, 16), 1024, 13.11, 15),
    ("scatter", POW2(0, 16), 1024, 13.36, 15),
    ("reduce_scatter", POW2(0, 16), 1024, 16.92, 15),       # the counts' sum is Size
    ("reduce_scatter_block", POW2(0, 14), 256, 32.06, 15),  # Size / P; 1 and 2 B dropped
    ("bcast", POW2(0, 16), 1024, 7.74, 15),
    ("reduce", POW2(0, 16), 1024, 16.18, 15),
    ("barrier", {0}, 0, 13.29, 4),
]


@pytest.mark.parametrize("collective,m_values,m,avg,line", OSU_CASES)
def test_osu_run_here_every_collective(tmp_path, capsys, collective, m_values, m, avg, line):
    f = OSU_RUN / f"osu_{collective}_np4.txt"
    t, err, _ = ingest(tmp_path, capsys, f, "--algorithm", 0, "--comm-size", 4)
    assert err == ""
    assert set(t.collective.tolist()) == {collective} and set(t.comm_size.tolist()) == {4}
    assert set(t.msg_size.tolist()) == m_values
    assert rows_at(t, msg_size=m).time_us.tolist() == [avg]
    assert f.read_text().splitlines()[line - 1].split()[-4] == f"{avg:.2f}"
    assert t.extra["n"].tolist() == ["20"] * len(t)


def test_osu_run_here_reduce_scatter_block_records_the_dropped_sizes(tmp_path, capsys):
    f = OSU_RUN / "osu_reduce_scatter_block_np4.txt"
    t, _, _ = ingest(tmp_path, capsys, f, "--algorithm", 0, "--comm-size", 4)
    meta = t.sources[0].metadata
    assert meta["source.1.m_zero_rows"].startswith("2 row(s) whose call moves no data (sizes 1, 2")
    assert meta["source.1.datatype"] == "MPI_CHAR"


def test_osu_run_here_barrier_by_algorithm_name(tmp_path, capsys):
    t, _, _ = ingest(tmp_path, capsys, OSU_RUN / "osu_barrier_np4.txt", "--algorithm",
                     "recursive_doubling", "--comm-size", 4, "--statistic", "max")
    assert t.algorithm.tolist() == [3] and t.time_us.tolist() == [13.30]


def test_osu_reduce_scatter_block_counts_floats(tmp_path, capsys):
    """With -T mpi_float the per-rank block is (Size / 4) / P floats: written from
    osu_reduce_scatter_block.c, as no run here used that type."""
    f = tmp_path / "osu.txt"
    f.write_text("\n# OSU MPI Reduce_scatter_block Latency Test v7.4\n# Datatype: MPI_FLOAT.\n"
                 "# Size       Avg Latency(us)\n"
                 + "".join(f"{s:<10d}{1.0 + i:20.2f}\n" for i, s in enumerate((8, 16, 32))))
    t, _, _ = ingest(tmp_path, capsys, f, "--algorithm", 0, "--comm-size", 4)
    assert t.msg_size.tolist() == [4, 8]           # 16 and 32 B: 1 and 2 floats per rank
    assert t.time_us.tolist() == [2.0, 3.0]
