"""What a sweep computes and writes the same, faster: the Student-t factor of its intervals
from scipy.special (launch_stats.t975), and a launch's completed rows in one write
(journal.TableFile.append_rows)."""
import numpy as np
from scipy import stats

from collsel.sources.sweep import journal, launch_stats


def test_t975_is_scipy_stats_t_ppf_bit_for_bit():
    df = np.arange(1, 3000)
    np.testing.assert_array_equal(launch_stats.t975(df), stats.t.ppf(0.975, df))
    for d in (1, 2, 3, 7, 29, 30, 31, 100, 2.0, 5.0):
        assert float(launch_stats.t975(d)) == float(stats.t.ppf(0.975, d))


def test_append_rows_writes_what_append_row_writes_one_by_one(tmp_path):
    columns = ["collective", "comm_size", "msg_size", "time_us", "tied"]
    rows = [{"collective": "bcast", "comm_size": p, "msg_size": m, "time_us": p * 1.5 + m / 3,
             "tied": (p + m) % 2} for p in (2, 4) for m in (1, 8, 64)]
    files = []
    for name, write in (("one_by_one", lambda t: [t.append_row(r) for r in rows]),
                        ("at_once", lambda t: t.append_rows(rows))):
        t = journal.TableFile(str(tmp_path / f"{name}.csv"), columns)
        t.create({"collective": "bcast"})
        t.open()
        write(t)
        t.append_rows([])
        t.close()
        files.append((tmp_path / f"{name}.csv").read_bytes())
    assert files[0] == files[1]
    assert files[0].count(b"\n") == len(rows) + 2
