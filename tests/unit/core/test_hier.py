"""Hierarchical methods without MPI: ids and names (core/mpi/algorithms.py), sweep planning, the
model's G (models/reduce.py), the blob's format-2 records (sinks/emit/blob.py), `collsel hier`."""
import struct
import subprocess

import pytest

from collsel.core.mpi import algorithms
from collsel.core.mpi.algorithms import Method
from collsel.errors import InputError
from collsel.sinks.emit import blob
from collsel.research.models import reduce as reduce_model
from collsel.sources.sweep.plan import plan_methods


def test_ids_names_and_parts():
    i = algorithms.algorithm_id("reduce", "hier:4:chain:linear")
    assert i == 1_000_000 + 4 * 100 + 2 * 10 + 1
    assert algorithms.hier_parts(i) == algorithms.Hier(4, 2, 1)
    assert algorithms.algorithm_id("reduce", str(i)) == i
    assert algorithms.algorithm_name("reduce", i) == "hier:4:2:1"
    assert algorithms.describe("reduce", Method(i, 0)) == "hier4/chain/linear"
    assert algorithms.hier_parts(7) is None and not algorithms.segments("reduce", i)
    for bad in ("hier:1:1:1", "hier:2:8:1", "hier:2:1", "hier:x:1:1"):
        with pytest.raises(InputError):
            algorithms.algorithm_id("reduce", bad)
    with pytest.raises(InputError):
        algorithms.algorithm_id("reduce", "hier:2:1:1", "mpich")


def test_sweep_plans_hierarchical_methods_beside_flat_ones():
    methods = plan_methods("bcast", "linear,hier:2:linear:linear,hier:4:chain:chain")
    assert methods == [Method(0, 0), Method(1, 0), Method(1_000_211, 0), Method(1_000_422, 0)]
    with pytest.raises(InputError, match="--algorithms"):
        plan_methods("bcast", "hier:2:linear:nonsense")


def test_model_groups_is_sqrt_p_for_the_flat_trees():
    # F(G) = (p/G - 1 + G - 1) steps for flat/linear: least at the divisor nearest sqrt(p)
    for p, g in ((4, 2), (9, 3), (16, 4), (8, 2)):
        assert reduce_model.model_groups("reduce", 1, p, 1 << 20, 50, 1e-3, 2e-4) == g
        assert reduce_model.model_groups("bcast", 2, p, 1 << 20, 50, 1e-3, 0) == g
    assert reduce_model.model_groups("reduce", 6, 8, 1024, 50, 1e-3, 2e-4) is None  # no model


class _Loaded:
    family = "openmpi"


def test_blob_method_records():
    hier = algorithms.hier_id("reduce", 4, 1, 2)
    records = blob._methods_bytes([Method(3, 8192, 0), Method(hier, 0)], "openmpi")
    assert struct.unpack("<HHIHBB", records[:12]) == (3, 0, 8192, 0, 0, 0)
    assert struct.unpack("<HHIHBB", records[12:]) == (0, 0, 0, 4, 1, 2)


def test_collsel_hier_reports_speedup_and_groups(tmp_path):
    head = "collective,comm_size,msg_size,algorithm,segsize,time_us\n"
    rows = [("reduce", 4, 1024, 0, 0, 10.0), ("reduce", 4, 1024, 1, 0, 8.0),
            ("reduce", 4, 1024, 1_000_211, 0, 4.0), ("reduce", 4, 1024, 1_000_411, 0, 6.0)]
    table = tmp_path / "t.csv"
    table.write_text(head + "".join(",".join(map(str, r)) + "\n" for r in rows))
    split = tmp_path / "bench.txt"
    split.write_text("#@nprocs=4\n#@hier_split_us=1000211=123.5,1000411=99\n")
    done = subprocess.run(["collsel", "hier", str(table), "--split",
                           str(split)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "| 4 | 1024 | linear | 8.0 | 10.0 | 4.0 | 2 | 2,4 | 2 | 2.00 | 2.50 | 123.5 |" \
        in done.stdout, done.stdout


@pytest.mark.parametrize("flag, value", [("--alpha", "nan"), ("--beta", "-1"), ("--gamma", "inf")])
def test_collsel_hier_refuses_bad_model_parameters(tmp_path, flag, value):
    table = tmp_path / "t.csv"
    table.write_text("collective,comm_size,msg_size,algorithm,segsize,time_us\n"
                     "reduce,4,1024,1,0,8\nreduce,4,1024,1000211,0,4\n")
    done = subprocess.run(["collsel", "hier", str(table), flag, value],
                          capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"{flag} " in done.stderr and "out of range" in done.stderr


@pytest.mark.parametrize("content, message", [
    (None, "cannot read"),
    ("#@nprocs=4\n#@hier_split_us=1000211=abc\n", "split time 'abc' is not a number"),
    ("#@nprocs=4\n#@hier_split_us=x=1\n", "method id 'x' is not an integer"),
    ("#@nprocs=4\n", "no '#@nprocs=' and '#@hier_split_us=' header lines")])
def test_collsel_hier_refuses_bad_split_files(tmp_path, content, message):
    table = tmp_path / "t.csv"
    table.write_text("collective,comm_size,msg_size,algorithm,segsize,time_us\n"
                     "reduce,4,1024,1,0,8\nreduce,4,1024,1000211,0,4\n")
    split = tmp_path / "bench.txt"
    if content is not None:
        split.write_text(content)
    done = subprocess.run(["collsel", "hier", str(table), "--split", str(split)],
                          capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert message in done.stderr and str(split) in done.stderr
