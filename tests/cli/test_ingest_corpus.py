"""Ingesting other people's per-algorithm datasets: each ingest feature the corpus needs, on small
files written here (the algorithm from the file name or a flag and --relabel, seconds,
blank-separated text without a header, --where, --duplicates median, a stray line refused or
skipped with its FILE:LINE, barrier without a size column), then the corpus recipe
(speed/corpus/ingest.py, `make corpus`) over ../shared/corpus, checked against the facts of the
corpus README."""
import importlib.util
import os
import shlex
import statistics

import numpy as np
import pytest

from collsel import cli
from collsel.core.maps import table
from helpers import REPO, SHARED

CORPUS = SHARED / "corpus"
HEADER = "Processes,Size,Latency\n"


def run(capsys, *args):
    status = cli.main(["ingest", *map(str, args)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def ingest(capsys, tmp_path, *args):
    """The table one successful ingest writes."""
    out = tmp_path / "t.csv"
    status, _, err = run(capsys, *args, "--out", out, "--force")
    assert status == 0, err
    return table.read_table(out, measured=True), out.read_text()


def refused(capsys, tmp_path, *args):
    """The one error line of an ingest that must fail, having written nothing."""
    out = tmp_path / "refused.csv"
    status, _, err = run(capsys, *args, "--out", out)
    assert status == 2, err
    assert not out.exists()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("collsel: error: "), err
    return lines[0]


def points(t):
    return sorted(zip(t.comm_size.tolist(), t.msg_size.tolist(), t.algorithm.tolist(),
                      t.time_us.tolist()))


def per_algorithm_files(tmp_path, ids=(1, 2)):
    """Two one-algorithm files, the id only in the name (as Trieste's bcast<N>_core.csv)."""
    for alg in ids:
        (tmp_path / f"bcast{alg}_core.csv").write_text(
            HEADER + f"2,8,{alg}.5\n4,8,{alg + 10}.5\n")
    return [tmp_path / f"bcast{alg}_core.csv" for alg in ids]


COMMON = ("--collective", "bcast", "--segsize", "0", "--time-unit", "us",
          "--map", "comm_size=Processes,msg_size=Size,time_us=Latency")


def test_algorithm_from_the_file_name_and_relabel(capsys, tmp_path):
    files = per_algorithm_files(tmp_path)
    t, _ = ingest(capsys, tmp_path, *files, *COMMON, "--pattern", "bcast{algorithm}_core.csv")
    assert points(t) == [(2, 8, 1, 1.5), (2, 8, 2, 2.5), (4, 8, 1, 11.5), (4, 8, 2, 12.5)]
    # files algo1, algo2 that ran ids 5 and 6: the label in the name is translated
    t, text = ingest(capsys, tmp_path, *files, *COMMON, "--pattern", "bcast{algorithm}_core.csv",
                     "--relabel", "1=5,2=binomial")
    assert points(t) == [(2, 8, 5, 1.5), (2, 8, 6, 2.5), (4, 8, 5, 11.5), (4, 8, 6, 12.5)]
    assert "and --relabel 2=binomial" in text      # the table says where its id came from


def test_algorithm_given_on_the_command_line(capsys, tmp_path):
    one = per_algorithm_files(tmp_path, ids=(3,))
    t, _ = ingest(capsys, tmp_path, *one, *COMMON, "--algorithm", "pipeline")
    assert set(t.algorithm.tolist()) == {3}
    # the file name says 3, the flag 6: two sources that disagree are an error
    line = refused(capsys, tmp_path, *one, *COMMON, "--algorithm", "6", "--pattern",
                   "bcast{algorithm}_core.csv")
    assert "conflicting algorithm" in line


def test_relabel_a_column_value(capsys, tmp_path):
    src = tmp_path / "barrier.csv"
    src.write_text("Algorithm,Processes,Avg Latency(us)\nring,2,3.0\nbruck,2,4.0\n")
    args = (src, "--collective", "barrier", "--map",
            "comm_size=Processes,algorithm=Algorithm,time_us=Avg Latency(us)")
    assert "unknown barrier algorithm 'ring'" in refused(capsys, tmp_path, *args)
    t, _ = ingest(capsys, tmp_path, *args, "--relabel", "ring=double_ring")
    # barrier has no size column: m = 0 for every row
    assert points(t) == [(2, 0, 2, 3.0), (2, 0, 4, 4.0)]


def test_no_size_column_only_for_barrier(capsys, tmp_path):
    src = tmp_path / "bcast.csv"
    src.write_text("Processes,Latency\n2,1.0\n")
    line = refused(capsys, tmp_path, src, "--collective", "bcast", "--algorithm", "1",
                   "--segsize", "0", "--time-unit", "us", "--map",
                   "comm_size=Processes,time_us=Latency")
    assert "--map has no msg_size, but bcast has message sizes" in line


def test_seconds_blank_separated_without_header(capsys, tmp_path):
    src = tmp_path / "sonic_long_10"
    # a home-made benchmark's printf: P bytes algorithm seconds, a blank at the line ends
    src.write_text("10 8192 1 0.0006339841 \n10 8192 2\t0.0000331876 \n")
    args = (src, "--collective", "scatter", "--segsize", "0", "--whitespace", "--columns",
            "P,bytes,alg,seconds", "--map", "comm_size=P,msg_size=bytes,algorithm=alg,"
            "time_us=seconds")
    line = refused(capsys, tmp_path, *args)
    assert "does not say its time unit; give --time-unit" in line
    t, text = ingest(capsys, tmp_path, *args, "--time-unit", "s")
    assert [(p, m, a) for p, m, a, _ in points(t)] == [(10, 8192, 1), (10, 8192, 2)]
    assert np.allclose(sorted(t.time_us), [33.1876, 633.9841])
    assert "separated by blanks (--whitespace)" in text
    # the same lines read as commas are one field each: refused, naming the line
    assert f"{src}:1: 1 field, the header has 4" in refused(
        capsys, tmp_path, *[a for a in args if a != "--whitespace"], "--time-unit", "s")


def test_where_keeps_one_mapping(capsys, tmp_path):
    src = tmp_path / "bcast_complete.csv"
    src.write_text("Algorithm,Allocation,Processes,MessageSize,Avg Latency(us)\n"
                   "linear,core,2,1,0.13\nlinear,node,2,1,1.71\nchain,core,2,1,0.16\n"
                   "chain,socket,2,1,0.6\n")
    args = (src, "--collective", "bcast", "--segsize", "0", "--map",
            "comm_size=Processes,msg_size=MessageSize,algorithm=Algorithm,"
            "time_us=Avg Latency(us)")
    # without a filter the three mappings are duplicates of one point
    assert "duplicate point" in refused(capsys, tmp_path, *args)
    t, text = ingest(capsys, tmp_path, *args, "--where", "Allocation=core")
    assert points(t) == [(2, 1, 1, 0.13), (2, 1, 2, 0.16)]
    assert "rows_not_selected=2 (--where Allocation=core)" in text
    line = refused(capsys, tmp_path, *args, "--where", "Allocation=cores")
    assert "no row has Allocation=cores" in line and "Allocation=socket" in line
    assert "no column 'Mapping'" in refused(capsys, tmp_path, *args, "--where", "Mapping=core")


def test_where_needs_a_mapped_csv(capsys, tmp_path):
    files = per_algorithm_files(tmp_path, ids=(1,))
    for flag in (("--where", "A=b"), ("--columns", "a,b"), ("--whitespace",),
                 ("--skip-malformed",)):
        line = refused(capsys, tmp_path, *files, "--format", "osu", *flag)
        assert f"{flag[0]} " in line and "give --map" in line


def test_repeated_rows_median(capsys, tmp_path):
    src = tmp_path / "bcastEPYC.csv"
    # one point measured four times, one run disturbed (a single iteration per row)
    src.write_text("Algorithm,Processors,Size(bytes),Avg_Latency(us)\n"
                   "0,2,1,7.9\n0,2,1,3.65\n0,2,1,4103.3\n0,2,1,5.36\n1,2,1,1.0\n")
    args = (src, "--collective", "bcast", "--segsize", "0", "--map",
            "comm_size=Processors,msg_size=Size(bytes),algorithm=Algorithm,"
            "time_us=Avg_Latency(us)")
    assert "duplicate point" in refused(capsys, tmp_path, *args)
    t, text = ingest(capsys, tmp_path, *args, "--duplicates", "median")
    assert points(t) == [(2, 1, 0, pytest.approx(statistics.median([7.9, 3.65, 4103.3, 5.36]))),
                         (2, 1, 1, 1.0)]
    assert "# duplicates=median: 5 rows read, 2 points" in text
    t, _ = ingest(capsys, tmp_path, *args, "--duplicates", "mean")
    assert t.time_us.max() > 1000       # what the median is there to avoid


def test_stray_line_refused_or_skipped_with_its_place(capsys, tmp_path):
    src = tmp_path / "sonig_long_12"
    src.write_text("sonic7.compute\n12 8192 1 0.0015236087\n12 8192 2 0.0031617426\n")
    args = (src, "--collective", "scatter", "--segsize", "0", "--whitespace", "--columns",
            "P,bytes,alg,seconds", "--time-unit", "s",
            "--map", "comm_size=P,msg_size=bytes,algorithm=alg,time_us=seconds")
    line = refused(capsys, tmp_path, *args)
    assert line == (f"collsel: error: {src}:1: 1 field, the header has 4: truncated line? "
                    "(--skip-malformed skips and reports such lines)")
    out = tmp_path / "t.csv"
    status, _, err = run(capsys, *args, "--skip-malformed", "--out", out)
    assert status == 0
    assert err == f"collsel: warning: {src}:1: skipped: 1 field, the header has 4 " \
        "(--skip-malformed)\n"
    assert sorted(table.read_table(out, measured=True).algorithm.tolist()) == [1, 2]
    assert "malformed_lines_skipped=1 (lines 1)" in out.read_text()


def test_skip_malformed_skips_an_empty_cell_but_not_a_bad_number(capsys, tmp_path):
    src = tmp_path / "reduce_algo3.csv"
    src.write_text(HEADER + "128,4,7.1\n128,8,\n128,16,7.3\n")
    args = (src, "--collective", "reduce", "--algorithm", "7", "--segsize", "0",
            "--time-unit", "us", "--map", "comm_size=Processes,msg_size=Size,time_us=Latency")
    assert f"{src}:3: empty time_us value" in refused(capsys, tmp_path, *args)
    t, _ = ingest(capsys, tmp_path, *args, "--skip-malformed")
    assert t.msg_size.tolist() == [4, 16]
    # a well-formed line with a non-number is a real error, skipped or not
    src.write_text(HEADER + "128,4,7.1\n128,8,n/a\n")
    assert f"{src}:3: time_us 'n/a' is not a number" in refused(capsys, tmp_path, *args,
                                                                 "--skip-malformed")


# --- the corpus recipe ---------------------------------------------------------------------

def load_recipe():
    spec = importlib.util.spec_from_file_location("corpus_recipe",
                                                  REPO / "speed" / "corpus" / "ingest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_summary_counts_missing_pairs_and_default(tmp_path):
    path = tmp_path / "t.csv"
    # 2 methods x 3 cells, one pair not measured, no algorithm 0
    path.write_text("collective,comm_size,msg_size,algorithm,segsize,time_us\n"
                    "bcast,2,8,1,0,1\nbcast,2,8,6,0,2\nbcast,2,16,1,0,1\nbcast,2,16,6,0,2\n"
                    "bcast,4,8,1,0,1\n")
    s = load_recipe().summarize(path)
    assert (s["cells"], s["grid"], s["missing"], s["default"]) == (3, 4, 1, False)
    assert s["methods"] == [(1, 0, 0), (6, 0, 0)]
    assert s["comm_sizes"].tolist() == [2, 4] and s["msg_sizes"].tolist() == [8, 16]


POW2 = [2**k for k in range(1, 9)]       # 2..256


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    if not CORPUS.is_dir():
        pytest.skip(f"{CORPUS}: the public datasets are not beside this clone")
    out = tmp_path_factory.mktemp("corpus") / "corpus"
    # paths as make corpus gives them: relative to the repository
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        assert load_recipe().main(["--corpus", os.path.relpath(CORPUS, REPO),
                                   "--out", str(out)]) == 0
    finally:
        os.chdir(cwd)
    return out


def read(corpus, name):
    return table.read_table(corpus / f"{name}.csv", measured=True)


def shape(t):
    return (sorted(set(t.comm_size.tolist())), sorted(set(t.msg_size.tolist())),
            sorted(set(t.algorithm.tolist())))


def test_corpus_tables_match_the_readme(corpus):
    sizes_2b_1m = [2**k for k in range(1, 21)]
    assert shape(read(corpus, "tanjaderin-bcast")) == (POW2, sizes_2b_1m, [0, 1, 2, 3, 6])
    assert shape(read(corpus, "tanjaderin-reduce")) == (POW2, sizes_2b_1m, [0, 1, 4, 5, 7])
    for a in ("core", "socket", "node"):
        assert shape(read(corpus, f"valentinisalessio-bcast-{a}")) == (
            list(range(2, 257)), [2**k for k in range(12)], [0, 1, 2, 5])
        assert shape(read(corpus, f"valentinisalessio-barrier-{a}")) == (
            list(range(2, 257)), [0], [0, 1, 2, 4])
    assert shape(read(corpus, "3sara-scatter-thin")) == (list(range(2, 49, 2)), sizes_2b_1m,
                                                         [0, 1, 2, 3])
    assert shape(read(corpus, "3sara-bcast-epyc")) == (POW2, sizes_2b_1m, [1, 4, 5, 6])
    for coll in ("bcast", "gather"):
        for a in ("core", "socket", "node"):
            ps, ms, algs = shape(read(corpus, f"aleminutolo-{coll}-{a}"))
            assert set(ps) <= set(range(2, 257, 2)) and len(ps) > 100
            assert (ms, algs) == (sizes_2b_1m, [1, 2, 3])
    node = read(corpus, "aleminutolo-bcast-node")
    assert sorted(set(node.comm_size[node.algorithm == 3].tolist())) == POW2
    # robonoff: bcast1 was a second default run and is not read
    assert shape(read(corpus, "robonoff-bcast")) == (POW2[:7], sizes_2b_1m[:18], [0, 3, 5])
    assert shape(read(corpus, "robonoff-scatter")) == (POW2[:7], sizes_2b_1m[:18], [0, 1, 2, 3])
    for part, ps in (("epyc", range(2, 255, 4)), ("thin", range(2, 25)),
                     ("fat", range(2, 37))):
        t = read(corpus, f"gabrynho-bcast-{part}")
        assert shape(t) == (list(ps), [2**k for k in range(21)], [1, 2, 3, 5])
        assert len(t) == len(ps) * 21 * 4          # no allreduce ('Reduce') row came in
    for part, ps in (("epyc", [2, 4, 8, 16, 32, 48, 64, 96, 128, 176, 224, 256]),
                     ("thin", list(range(4, 49, 4)))):
        t = read(corpus, f"luispky-bcast-{part}")
        assert shape(t) == (ps, [2**k for k in range(21)], [0, 1, 2, 5])
        assert len(t) == 12 * 21 * 4               # the repetitions merged, one row a point
        assert shape(read(corpus, f"luispky-barrier-{part}")) == (ps, [0], [0, 1, 2, 4])
    assert shape(read(corpus, "mmunini99-bcast")) == (POW2, sizes_2b_1m[:10], [1, 3, 5])
    reduce = read(corpus, "mmunini99-reduce")
    assert shape(reduce) == (POW2, sizes_2b_1m[:10], [4, 5, 7])
    assert len(reduce) == 8 * 10 * 3 - 1           # the one empty cell
    sonic, csi = read(corpus, "f1nbar-scatter-sonic"), read(corpus, "f1nbar-scatter-csi")
    steps = list(range(8192, 2**20 + 1, 8192))
    assert shape(sonic) == ([10, 12, 16, 20, 24, 30, 40], steps, [1, 2, 3])
    assert shape(csi)[0::2] == ([6, 8, 10, 12, 14, 20], [1, 2])
    assert set(shape(csi)[1]) <= set(steps)


def test_corpus_values_are_the_files_numbers(corpus):
    """Spot checks against the raw files: seconds scaled, repeated rows' median."""
    csi = read(corpus, "f1nbar-scatter-csi")
    # csi_long_10 line 1: "10 8192 1 0.0006339841" (seconds)
    at = (csi.comm_size == 10) & (csi.msg_size == 8192) & (csi.algorithm == 1)
    assert csi.time_us[at].tolist() == [633.9841]
    raw = (CORPUS / "luispky_HPC_project" / "bcastEPYC.csv").read_text().splitlines()[1:]
    runs = [float(r.split(",")[3]) for r in raw if r.split(",")[:3] == ["0", "2", "1"]]
    assert len(runs) == 10
    t = read(corpus, "luispky-bcast-epyc")
    at = (t.comm_size == 2) & (t.msg_size == 1) & (t.algorithm == 0)
    assert t.time_us[at].tolist() == [pytest.approx(statistics.median(runs))]


def test_corpus_commands_and_summary(corpus, capsys, tmp_path):
    commands = (corpus / "COMMANDS.txt").read_text()
    summary = (corpus / "SUMMARY.txt").read_text().splitlines()
    names = sorted(p.stem for p in corpus.glob("*.csv"))
    assert len(names) == 29 and len(summary) == 1 + len(names)
    assert sorted(line.split()[0] for line in summary[1:]) == names
    assert "# not read: " in commands and "bcast1_core_mapping_genoa.csv: run without" in commands
    # every table has its command, and a command read back from the file makes that table
    blocks = [b for b in commands.split("\n\n") if "\ncollsel ingest" in b]
    assert len(blocks) == len(names)
    block = next(b for b in blocks if b.startswith("# robonoff-bcast:"))
    argv = shlex.split("\n".join(line for line in block.splitlines()
                                 if not line.startswith("#")).replace("\\\n", " "))
    assert argv[:2] == ["collsel", "ingest"] and not any("bcast1_" in a for a in argv)
    out = tmp_path / "again.csv"
    argv[argv.index("--out") + 1] = str(out)
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        assert cli.main(argv[1:]) == 0
    finally:
        os.chdir(cwd)
    capsys.readouterr()
    assert out.read_text() == (corpus / "robonoff-bcast.csv").read_text()
