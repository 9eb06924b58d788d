"""A paired journal's launches are its `# launch.` lines in order (journal.LaunchLine), not its
metadata keys: a sweep resumed with more --msg-sizes runs launch K of a P again over the new
sizes, and both runs' costs, unusable marks and rows stay apart."""
import pytest

from collsel.sources.sweep import journal, refine
from helpers import run_in_process

JOURNAL = """\
# collective=bcast
collective,comm_size,msg_size,algorithm,segsize,faninout,launch,seed,mean_us,median_us,\
min_us,max_us,stdev_us,ci_halfwidth_us,n,ci_met
bcast,2,1,1,0,0,1,7,1.0,1.0,1.0,1.0,0.0,0.0,5,1
# unusable.2.1=1:2:0:0
# launch.2.1=seed=7 status=ok sizes=1 wall_s=1.5
bcast,2,8,1,0,0,1,7,2.0,2.0,2.0,2.0,0.0,0.0,5,1
bcast,2,8,2,0,0,1,7,3.0,3.0,3.0,3.0,0.0,0.0,5,1
# unusable.2.1=8:3:0:0
# launch.2.1=seed=7 status=ok sizes=1 wall_s=2.5
bcast,4,1,1,0,0,1,9,1.0,1.0,1.0,1.0,0.0,0.0,5,1
# launch.4.1=seed=9 status=ok sizes=1 wall_s=x
"""


def test_a_repeated_launch_key_is_two_launches_each_with_its_rows_and_marks(tmp_path):
    path = tmp_path / "t.csv.launches"
    path.write_text(JOURNAL)
    _, rows, _, log = journal.load_existing(str(path), journal.PAIRED_JOURNAL_COLUMNS, "bcast",
                                            launches=True)
    assert [(x.mark, x.k, x.wall_s, x.unusable) for x in log.lines] == [
        ("2", 1, 1.5, "1:2:0:0"), ("2", 1, 2.5, "8:3:0:0"), ("4", 1, 0.0, "")]
    assert log.of_row.tolist() == [0, 1, 1, 2]        # each row: the launch line after it
    assert journal.read_launches(str(path)) == log.lines
    assert refine.planned_seconds(log.lines, 1) == 4.0       # the metadata kept only 2.5 + 0


def test_a_sweep_grown_by_sizes_keeps_every_launch_and_its_curve_sees_them_in_turn(tmp_path):
    recording = tmp_path / "rec.csv"
    rows = ["collective,comm_size,msg_size,algorithm,segsize,time_us"]
    rows += [f"bcast,{p},{m},{a},0,{(10 + p + m / 100) * (1 + a / 10):.4f}"
             for p in (2, 4) for m in (1, 1024, 65536) for a in (0, 1, 2)]
    recording.write_text("\n".join(rows) + "\n")
    out = tmp_path / "t.csv"
    sweep = ("sweep", "--collective", "bcast", "--replay", recording, "--out", out,
             "--launches", "2", "--time-cap", "0.001")
    assert run_in_process(*sweep, "--msg-sizes", "1,1024").returncode == 0
    first = journal.read_launches(journal.journal_path(str(out)))
    got = run_in_process(*sweep, "--msg-sizes", "1,1024,65536", "--resume")
    assert got.returncode == 0, got.stderr
    launches = journal.read_launches(journal.journal_path(str(out)))
    # launches 1 and 2 of P 2 and 4, then each again over the new size
    assert [(x.mark, x.k) for x in launches] == [("2", 1), ("4", 1), ("2", 2), ("4", 2)] * 2
    assert launches[:4] == first
    assert refine.planned_seconds(launches, 2) == pytest.approx(sum(x.wall_s for x in launches))
    # what the sweep had measured after its first 4 launches: no cell of the new size yet
    before, after = refine.table_plans(str(out), [4, None])
    assert {m for _, m in before.cells()} == {1, 1024}
    assert {m for _, m in after.cells()} == {1, 1024, 65536}
