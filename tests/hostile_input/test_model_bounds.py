"""Bounded work and checked flags in `collsel model` and `collsel sweep`: a grid too large to
predict, a size no table could hold, a bad numeric flag or an unusable output path is one line
naming the flag (and the limit and the flag raising it), exit status 2, before any work, and no
output file.

Everything runs in-process through collsel.cli.main. The work a refused command must not reach
(predicting, measuring, launching) is replaced by a function failing the test, so a check that is
missing or comes too late shows up as a failure, not as a slow test.
"""
import os

import pytest

from collsel import cli
from collsel.core.maps import table as tbl
from collsel.research.models import experiments, predict
from collsel.sources.sweep import engine as sweep_engine

OUT = "{tmp}/out.csv"
PREDICT = ["model", "predict", "--preset", "gros", "--out", OUT]
SWEEP = ["sweep", "--collective", "bcast", "--out", OUT, "--comm-sizes", "2",
         "--msg-sizes", "1", "--algorithms", "binomial:0"]
FIT = ["model", "fit", "--out", "{tmp}/params.json"]


def _no_work(*args, **kwargs):
    pytest.fail("work started although the input should have been refused first")


@pytest.fixture
def no_work(monkeypatch):
    monkeypatch.setattr(predict, "predict_times", _no_work)
    monkeypatch.setattr(experiments, "Runner", _no_work)
    monkeypatch.setattr(sweep_engine, "run", _no_work)
    monkeypatch.setattr(sweep_engine, "dry_run", _no_work)


@pytest.fixture
def scratch(tmp_path):
    (tmp_path / "a_file").write_text("x\n")
    (tmp_path / "a_dir").mkdir()
    return tmp_path


def refused(capsys, scratch, argv):
    """Run argv (with {tmp} the scratch directory): exit 2, exactly one stderr line, and the
    scratch directory as it was (no output file)."""
    argv = [a.replace("{tmp}", str(scratch)) for a in argv]
    before = sorted(os.listdir(scratch))
    capsys.readouterr()
    status = cli.main(argv)
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert status == 2, err
    assert len(lines) == 1 and lines[0].startswith("collsel: error: "), err
    assert "Traceback" not in err
    assert sorted(os.listdir(scratch)) == before, "an output was written"
    assert (scratch / "a_file").read_text() == "x\n"
    return lines[0].replace(str(scratch), "{tmp}")


# --- model predict: bounded work ------------------------------------------------------------

@pytest.mark.parametrize("extra, expected", [
    # The grid: 10^7 P x 9 sizes x 6 methods, refused by its row count up front.
    (["--comm-sizes", "1-10000000", "--msg-sizes", "16K-4M"],
     "10000000 P x 9 message sizes x 6 methods = 540000000 rows, more than --max-rows 250000"),
    (["--comm-sizes", "1-2147483647", "--msg-sizes", "1"],
     "= 12884901882 rows, more than --max-rows 250000"),
    # Under the row limit, but the rows' P add up to more ranks than the model may walk.
    (["--comm-sizes", "100000-101000", "--msg-sizes", "16K-4M"],
     "the 54054 rows walk 5432427000 ranks in all (the sum of P over the rows), more than "
     "--max-rows x 2048 = 512000000"),
    (["--comm-sizes", "2-100", "--msg-sizes", "1-4K", "--max-rows", "1000"],
     "99 P x 13 message sizes x 6 methods = 7722 rows, more than --max-rows 1000"),
    (["--comm-sizes", "2,3000000", "--msg-sizes", "1"],
     "--comm-sizes: P 3000000 is above --max-comm-size 1048576"),
    (["--comm-sizes", "2,300", "--msg-sizes", "1", "--max-comm-size", "256"],
     "--comm-sizes: P 300 is above --max-comm-size 256"),
])
def test_predict_refuses_grids_over_the_limits(capsys, scratch, no_work, extra, expected):
    line = refused(capsys, scratch, PREDICT + extra)
    assert expected in line, line
    assert "raise --max-" in line, line


@pytest.mark.parametrize("extra, expected", [
    (["--comm-sizes", "2", "--msg-sizes", "1-2^70"],
     "--msg-sizes: message size 2^70 out of range [0, 9223372036854775807]"),
    (["--comm-sizes", "2", "--msg-sizes", "1-18446744073709551616"],
     "--msg-sizes: message size 18446744073709551616 out of range [0, 9223372036854775807]"),
    (["--comm-sizes", "2", "--msg-sizes", "20000000000G"],
     "--msg-sizes: message size 20000000000G out of range [0, 9223372036854775807]"),
    (["--comm-sizes", "2", "--msg-sizes", "1" * 5000], "--msg-sizes: message size 111"),
    (["--comm-sizes", "0,2", "--msg-sizes", "1"],
     "--comm-sizes: communicator size 0 out of range [1, 2147483647]"),
    (["--comm-sizes", "2147483648", "--msg-sizes", "1"],
     "--comm-sizes: communicator size 2147483648 out of range [1, 2147483647]"),
    (["--comm-sizes", "2", "--msg-sizes", "1", "--ranks-per-node", "0"],
     "--ranks-per-node: ranks per node 0 out of range [1, 2147483647]"),
    (["--comm-sizes", "2", "--msg-sizes", "1", "--ranks-per-node", "-3"],
     "--ranks-per-node: ranks per node -3 out of range [1, 2147483647]"),
    (["--comm-sizes", "2", "--msg-sizes", "1", "--ranks-per-node", "two"],
     "--ranks-per-node: ranks per node 'two' is not a size or count (accepted: 4096, 4K"),
    (["--comm-sizes", "2", "--msg-sizes", "1", "--max-rows", "0"],
     "--max-rows 0 out of range [1, 100000000]"),
    (["--comm-sizes", "2", "--msg-sizes", "1", "--max-comm-size", "1.5"],
     "--max-comm-size: communicator size '1.5' is not a size or count (accepted: 4096, 4K"),
])
def test_predict_refuses_bad_sizes_and_flags(capsys, scratch, no_work, extra, expected):
    assert expected in refused(capsys, scratch, PREDICT + extra)


def test_predict_within_the_limits_writes_the_table(capsys, tmp_path):
    """The positive control: a grid just under --max-rows, and --ranks-per-node, work."""
    out = tmp_path / "t.csv"
    assert cli.main(["model", "predict", "--preset", "gros", "--comm-sizes", "2-4,40",
                     "--msg-sizes", "16K-64K", "--ranks-per-node", "2", "--max-rows", "72",
                     "--out", str(out)]) == 0, capsys.readouterr().err
    table = tbl.read_table(str(out))
    assert len(table) == 4 * 3 * 6
    assert table.sources[0].metadata["ranks_per_node"] == "2"
    assert sorted(set(table.comm_size.tolist())) == [2, 3, 4, 40]


# --- output paths, checked before any work --------------------------------------------------

@pytest.mark.parametrize("argv, expected", [
    (PREDICT[:-1] + ["{tmp}/a_dir", "--comm-sizes", "2", "--msg-sizes", "1"],
     "--out {tmp}/a_dir is a directory"),
    (PREDICT[:-1] + ["{tmp}/a_file/x.csv", "--comm-sizes", "2", "--msg-sizes", "1"],
     "--out {tmp}/a_file/x.csv: {tmp}/a_file is not a directory"),
    (PREDICT[:-1] + ["{tmp}/no/such/x.csv", "--comm-sizes", "2", "--msg-sizes", "1"],
     "does not exist"),
    (["model", "fit", "--out", "{tmp}/a_dir"], "--out {tmp}/a_dir is a directory"),
    (FIT + ["--experiments", "{tmp}/a_dir"], "--experiments {tmp}/a_dir is a directory"),
    (FIT + ["--experiments", "{tmp}/a_file/e.csv"], "--experiments {tmp}/a_file/e.csv:"),
    (["model", "validate", "{tmp}/none.json", "--measured", "{tmp}/none.csv", "--json",
      "{tmp}/a_dir"], "--json {tmp}/a_dir is a directory"),
    (["model", "validate", "{tmp}/none.json", "--measured", "{tmp}/none.csv", "--json",
      "{tmp}/a_file/v.json"], "--json {tmp}/a_file/v.json: {tmp}/a_file is not a directory"),
    (SWEEP[:4] + ["{tmp}/a_dir"] + SWEEP[5:], "--out {tmp}/a_dir is a directory"),
    (SWEEP[:4] + ["{tmp}/a_file/t.csv"] + SWEEP[5:], "{tmp}/a_file is not a directory"),
    (SWEEP + ["--emit-sbatch", "{tmp}/a_dir"], "--emit-sbatch {tmp}/a_dir is a directory"),
    (SWEEP + ["--emit-sbatch", "{tmp}/a_file/s.sbatch"],
     "--emit-sbatch {tmp}/a_file/s.sbatch: {tmp}/a_file is not a directory"),
])
def test_unusable_output_paths_are_refused_up_front(capsys, scratch, no_work, argv, expected):
    assert expected in refused(capsys, scratch, argv)


def test_predict_into_proc_is_one_line(capsys, scratch):
    """/proc/x: refused with one line and nothing written (today by the atomic writer, after
    the prediction: core.io.values.output_file accepts it, see the report)."""
    line = refused(capsys, scratch, ["model", "predict", "--preset", "gros", "--comm-sizes", "2",
                                     "--msg-sizes", "1", "--out", "/proc/x"])
    assert "/proc/x" in line


# --- every numeric flag of sweep and model fit ----------------------------------------------

@pytest.mark.parametrize("extra, expected", [
    (["--launches", "0"], "--launches 0 out of range [1, 100]"),
    (["--launches", "3.5"], "--launches '3.5' is not an integer"),
    (["--time-cap", "0"], "--time-cap 0 out of range [1e-06, 1e+06]"),
    (["--time-cap", "nan"], "--time-cap nan out of range"),
    (["--time-cap", "soon"], "--time-cap 'soon' is not a number"),
    (["--rel-ci", "11"], "--rel-ci 11 out of range [1e-06, 10]"),
    (["--min-reps", "1"], "--min-reps 1 out of range [2, 100000000]"),
    (["--min-reps", "10", "--max-reps", "5"], "--max-reps 5 out of range [10, 100000000]"),
    (["--warmup", "-1"], "--warmup -1 out of range [0, 1000000]"),
    (["--timeout", "0"], "--timeout 0 out of range (0, 604800]"),
    (["--timeout", "inf"], "--timeout inf out of range (0, 604800]"),
    (["--progress-interval", "-5"], "--progress-interval -5 out of range (0, 86400]"),
    (["--sbatch-nodes", "0"], "--sbatch-nodes 0 out of range [1, 2147483647]"),
    (["--sbatch-nodes", "4-2"], "--sbatch-nodes (the maximum of MIN-MAX) 2 out of range [4, "),
    (["--sbatch-time", "4 hours"], "--sbatch-time '4 hours' is not a Slurm time"),
    (["--sbatch-args=--mail-user='a"], "--sbatch-args \"--mail-user='a\": No closing "
                                          "quotation"),
    (["--launcher-args", "--mca 'x"], "--launcher-args \"--mca 'x\": No closing quotation"),
    (["--msg-sizes", "3G"], "--msg-sizes: message size (an int count in the benchmark) 3G out "
                            "of range [0, 2147483647]"),
    (["--segsizes", "4G", "--algorithms", "pipeline"],
     "--segsizes: segment size 4G out of range [0, 2147483647]"),
    (["--algorithms", "pipeline:2^40"],
     "--algorithms pipeline:2^40: segment size 2^40 out of range [0, 2147483647]"),
    (["--comm-sizes", "1-3000000"], "--comm-sizes: 3000000 communicator sizes, more than the "
                                    "1000000"),
])
def test_sweep_numeric_flags(capsys, scratch, no_work, extra, expected):
    assert expected in refused(capsys, scratch, SWEEP + extra + ["--dry-run"])


@pytest.mark.parametrize("extra, expected", [
    (["--time-cap", "-1"], "--time-cap -1 out of range [1e-06, 1e+06]"),
    (["--launches", "0"], "--launches 0 out of range [1, 100]"),
    (["--launches", "many"], "--launches 'many' is not an integer"),
    (["--progress-interval", "0"], "--progress-interval 0 out of range (0, 86400]"),
    (["--comm-sizes", "1,4"], "--comm-sizes: communicator size 1 out of range [2, 2147483647]"),
    (["--msg-sizes", "1,3G"], "--msg-sizes: message size 3G out of range [0, 2147483647]"),
])
def test_fit_numeric_flags(capsys, scratch, no_work, extra, expected):
    assert expected in refused(capsys, scratch, FIT + extra)


def test_predict_refuses_times_no_table_can_hold(capsys, scratch):
    """A prediction beyond a day (here from an absurd per-byte cost) would make a table the
    reader refuses: one line naming the cell, no output."""
    import json
    from collsel.research.models import params
    doc = json.loads(open(params.preset_path("gros")).read())
    for method in doc["methods"]:
        method["tlop"]["L1p"] = 1e9
    (scratch / "huge.json").write_text(json.dumps(doc))
    line = refused(capsys, scratch, ["model", "predict", "{tmp}/huge.json", "--comm-sizes",
                                     "64", "--msg-sizes", "4M", "--out", OUT])
    assert "{tmp}/huge.json: the model predicts" in line and "P=64, m=4194304" in line, line
    assert "beyond the 8.64e+10 µs (a day) a table may hold" in line, line


# --- one line even for hostile text; every message names its flag --------------------------

@pytest.mark.parametrize("argv, expected", [
    (SWEEP[:4] + ["{tmp}/t\nrm -rf ~\n.csv"] + SWEEP[5:] + ["--emit-sbatch", "{tmp}/s.sbatch"],
     "--out '{tmp}/t\\nrm -rf ~\\n.csv': a line break cannot be part of it"),
    (SWEEP + ["--emit-sbatch", "{tmp}/s.sbatch", "--sbatch-time", "1:00\nrm -rf ~"],
     "--sbatch-time '1:00\\nrm -rf ~' is not a Slurm time"),
    (SWEEP + ["--emit-sbatch", "{tmp}/s.sbatch", "--launcher-args", "-x\nrm -rf ~"],
     "--launcher-args '-x\\nrm -rf ~': a line break cannot be part of it"),
    (PREDICT[:-1] + ["{tmp}/p\n.csv", "--comm-sizes", "2", "--msg-sizes", "1"],
     "--out '{tmp}/p\\n.csv': a line break"),
    (SWEEP[:-2] + ["--algorithms", "evil", "--dry-run"],
     "--algorithms: unknown bcast algorithm 'evil'"),
    (SWEEP[:-2] + ["--algorithms", "linear:8K", "--dry-run"],
     "--algorithms: bcast algorithm 1 (basic_linear) ignores the segment size"),
    (["sweep", "--collective", "bcast; rm", "--out", OUT, "--dry-run"],
     "--collective: unknown collective 'bcast; rm'"),
    (["model", "predict", "--preset", "evil", "--comm-sizes", "2", "--msg-sizes", "1", "--out",
      OUT], "--preset: unknown preset 'evil'"),
    (["model"], "collsel model: give an action: fit, predict, validate or paper"),
])
def test_hostile_text_is_one_line_naming_the_flag(capsys, scratch, no_work, argv, expected):
    assert expected in refused(capsys, scratch, argv)


EXPERIMENTS_HEADER = ("experiment,comm_size,msg_size,algorithm,segsize,gather_size,launch,"
                      "time_us,n\n")
NBFT = "nbft,2,1,0,0,0,1,2.0,50\nnbft,2,1024,0,0,0,1,3.0,50\n"
GATHER = "bcast-gather,4,1024,6,0,1024,1,9.5,40\n"


@pytest.mark.parametrize("body, expected", [
    ("", "{tmp}/e.csv: no bcast-gather rows: nothing to fit a method from"),
    (NBFT, "{tmp}/e.csv: no bcast-gather rows"),
    (GATHER, "{tmp}/e.csv: needs nbft rows at P=2 for two message sizes or more"),
    (NBFT + "bcast-gather,4,1024,99,0,1024,1,9.5,40\n",
     "{tmp}/e.csv:4: algorithm 99 is not a bcast algorithm with a model"),
    (NBFT + "bcast-gather,4,1024,6,0,1024,1,inf,40\n", "{tmp}/e.csv:4: time_us inf"),
    (NBFT + "bcast-gather,4,1024,6,0,1024,0,9.5,40\n",
     "{tmp}/e.csv:4: launch 0 out of range [1, 100]"),
    (NBFT + "bcast-gather," + "9" * 5000 + ",1024,6,0,1024,1,9.5,40\n",
     "{tmp}/e.csv:4: comm_size 99999999999999999999... (5000 digits) out of range"),
])
def test_fit_refuses_experiments_it_cannot_use(capsys, scratch, no_work, body, expected):
    (scratch / "e.csv").write_text(EXPERIMENTS_HEADER + body)
    assert expected in refused(capsys, scratch, FIT + ["--experiments", "{tmp}/e.csv"])
