"""Small rules with one implementation each (issue 42, point 6), and the copies that must stay
equal to it checked here: the cell of a value, a collective's name (also stated in the tree
schema), bytes as text, a table row's algorithm id, a measured message size's bound, the item at
an axis' most measured values."""
import numpy as np
import pytest

from collsel.sources.launch_tables import read_launch_tables
from collsel.core import schemas
from collsel.core.io import names, values
from collsel.core.maps import decision_map, table
from collsel.core.trees import tree
from collsel.core.mpi.method_text import size_text
from collsel.errors import InputError
from collsel.sinks.report.page import Format


def test_the_tree_schema_states_the_collective_name_rule():
    """JSON Schema has no fullmatch: the schema's pattern is the Python one, anchored."""
    pattern = schemas.schema("tree")["properties"]["collective"]["pattern"]
    assert pattern == f"^{names.COLLECTIVE_NAME.pattern}$"


def test_collective_names():
    ok = ["bcast", "reduce_scatter_block", "a" + "_" * 23]
    bad = ["", "Bcast", "1bcast", "_bcast", "all-reduce", "a" * 25]
    assert [bool(names.COLLECTIVE_NAME.fullmatch(n)) for n in ok + bad] == [True] * 3 + [False] * 6


def test_one_value_and_many_fall_in_the_same_cell():
    axes = [decision_map.make_axis("comm_size", decision_map.LINEAR, [2, 4, 16, 17]),
            decision_map.make_axis("msg_size", decision_map.LOG2, [0, 8, 2**20, 2**64 - 1]),
            decision_map.make_axis("ppn", decision_map.CATEGORY, ["a", "b", "c"])]
    queries = [[0, 1, 2, 3, 4, 9, 10, 11, 16, 17, 2**31 - 1],
               [0, 1, 2, 3, 8, 9, 2**20, 2**20 + 1, 2**42, 2**63, 2**64 - 1],
               [0, 1, 2, 3]]
    many = tree.cells_of_values(axes, queries)
    for axis, query, cells in zip(axes, queries, many):
        assert [axis.cell_of(v) for v in query] == cells.tolist()
        assert cells.tolist() == [sum(c <= v for c in axis.cuts) for v in query]


def test_bytes_as_text_in_words_and_on_axes():
    sizes = [0, 1, 1000, 1024, 1536, 8192, 2**20, 3 * 2**20 + 1024, 2**30, 2**40, 2**64 - 1]
    assert [size_text(n) for n in sizes] == [
        "0 B", "1 B", "1000 B", "1 KiB", "1536 B", "8 KiB", "1 MiB", "3073 KiB", "1 GiB",
        "1024 GiB", f"{2**64 - 1} B"]
    assert [size_text(n, compact=True) for n in sizes] == [
        "0", "1", "1000", "1K", "1536", "8K", "1M", "3073K", "1G", "1024G", str(2**64 - 1)]
    assert [Format.size(n) for n in sizes] == [size_text(n) for n in sizes]


def test_a_rows_algorithm_is_the_same_read_column_wise_or_row_by_row(tmp_path):
    """A plain table is read column-wise, one with a quoted field row by row (to name the
    first bad field): both take the algorithm from the same rule (core.maps.table._algorithm)."""
    rows = ["bcast,2,8,binomial,0,1.5", "bcast,2,8,1,0,1.0", "bcast,2,8,0,0,2.0",
            "newcoll,2,8,7,0,1.0"]
    plain, quoted = tmp_path / "plain.csv", tmp_path / "quoted.csv"
    header = "collective,comm_size,msg_size,algorithm,segsize,time_us\n"
    plain.write_text(header + "\n".join(rows) + "\n")
    quoted.write_text(header + "\n".join(rows[:-1] + ['"newcoll",2,8,7,0,1.0']) + "\n")
    a, b = table.read_table(plain), table.read_table(quoted)
    assert a.algorithm.tolist() == b.algorithm.tolist() == [6, 1, 0, 7]


def test_a_journal_holds_message_sizes_to_the_table_readers_bound(tmp_path):
    """A journal's rows become table rows (and per-launch tables): both readers take a message
    size up to core.io.values.TABLE_MSG_SIZE (2^63 - 1, Open MPI's long) and no further."""
    top = values.TABLE_MSG_SIZE[1]
    head = "collective,comm_size,msg_size,algorithm,segsize,launch,median_us\n"
    for m, ok in ((top, True), (top + 1, False)):
        path = tmp_path / f"{m}.launches"
        path.write_text(head + f"bcast,2,{m},1,0,1,1.5\n")
        csv = tmp_path / f"{m}.csv"
        csv.write_text("collective,comm_size,msg_size,algorithm,segsize,time_us\n"
                       f"bcast,2,{m},1,0,1.5\n")
        if ok:
            assert read_launch_tables(path, "bcast")[1].msg_size.tolist() == [m]
            assert table.read_table(csv).msg_size.tolist() == [m]
        else:
            for read in (lambda: read_launch_tables(path, "bcast"), lambda: table.read_table(csv)):
                with pytest.raises(InputError, match=f"msg_size {m} out of range"):
                    read()


def test_the_item_at_the_most_measured_values():
    """One rule for the Open MPI rules file and MPICH's JSON where they cannot tell m apart."""
    axis = decision_map.make_axis("msg_size", decision_map.LOG2, [1, 8, 64, 512])
    assert axis.most_measured(np.array([3, 5, 5, 3])) == 3         # a tie: the smaller m's
    assert type(axis.most_measured(np.array([3, 5, 5, 1]))) is int
    assert axis.most_measured(["a", "b", "b", "c"]) == "b"
