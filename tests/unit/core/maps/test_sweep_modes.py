"""Sweeps of different modes never combine into one table: a by-size launch (every Intel preset in
one process) measures other times than a per-method launch of the same preset, so a cell's
fastest method would be the faster mode's. Tables that did not come from a sweep (ingested ones)
carry no mode and combine with anything of their family."""
import pytest

from collsel import cli
from collsel.core.maps import table
from collsel.errors import InputError

HEADER = "collective,comm_size,msg_size,algorithm,segsize,time_us"


def write(path, meta, times):
    lines = [f"# {k}={v}" for k, v in meta.items()] + [HEADER]
    lines += [f"bcast,2,{m},{a},0,{t}" for (m, a), t in times.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def sweep_meta(mode=None, options_mode=None):
    meta = {"source": "collsel sweep", "algorithm_family": "intel"}
    if mode:
        meta["mode"] = mode
    meta["options"] = "collsel sweep --mpi intel" + (f" --mode {options_mode}"
                                                     if options_mode else "")
    return meta


@pytest.mark.parametrize("meta, mode", [
    ({"source": "collsel sweep", "mode": "by-size"}, "by-size"),
    ({"source": "collsel sweep", "options": "collsel sweep --mode paired --mpi openmpi"},
     "paired"),
    ({"source": "collsel sweep", "options": "collsel sweep --mpi intel"}, "per-method"),
    ({"source": "collsel ingest", "options": "--mode by-size"}, None),
    ({}, None),
])
def test_the_mode_a_table_was_swept_in(meta, mode):
    assert table.sweep_mode(meta) == mode


def test_a_by_size_and_a_per_method_table_do_not_combine(tmp_path):
    sized = write(tmp_path / "sized.csv", sweep_meta("by-size"), {(8, 1): 9.0, (8, 2): 7.0})
    # a table of before `# mode=`: its options name the mode
    plain = write(tmp_path / "plain.csv", sweep_meta(options_mode="per-method"),
                  {(512, 1): 5.0, (512, 2): 6.0})
    with pytest.raises(InputError, match=r"plain\.csv: measured by a per-method sweep, but "
                                         r".*sized\.csv by a by-size sweep"):
        table.read_tables([sized, plain])


def test_tables_of_one_mode_or_not_swept_combine(tmp_path):
    a = write(tmp_path / "a.csv", sweep_meta("by-size"), {(8, 1): 9.0})
    b = write(tmp_path / "b.csv", sweep_meta(options_mode="by-size"), {(512, 1): 5.0})
    ingested = write(tmp_path / "c.csv", {"source": "collsel ingest",
                                          "algorithm_family": "intel"}, {(64, 1): 3.0})
    assert len(table.read_tables([a, b, ingested])) == 3


def test_build_refuses_mixed_modes_in_one_line(tmp_path, capsys):
    sized = write(tmp_path / "sized.csv", sweep_meta("by-size"), {(8, 1): 9.0, (8, 2): 7.0})
    plain = write(tmp_path / "plain.csv", sweep_meta("per-method"),
                  {(512, 1): 5.0, (512, 2): 6.0})
    out = tmp_path / "tree"
    assert cli.main(["build", str(sized), str(plain), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "do not compare" in err[0]
    assert not out.exists()
