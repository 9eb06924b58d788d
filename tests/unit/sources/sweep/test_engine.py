"""The sweep engine (sources/sweep/engine.py) with a scripted protocol, in process and without
MPI: a failed size is given up and the launch runs again over the rest; a launch that fails
without a header gives up all it left; failures are `# failed.K=` lines and one error; a first
launch that cannot start leaves nothing behind, unless a node of the emulated cluster is gone
(then it is a failed launch naming the node, and the sweep goes on); an existing table needs --resume or --force (a
dry run only reads it)."""
import io
import types

import pytest

from collsel.core.io import csvfile
from collsel.errors import CollselError, InputError
from collsel.sources.measure.supervise import LaunchResult
from collsel.sources.sweep import engine, startup

COLUMNS = ["collective", "comm_size", "msg_size", "algorithm", "segsize", "time_us"]


def config(tmp_path, **given):
    settings = dict(out=str(tmp_path / "t.csv"), command="collsel sweep (test)", options="",
                    warnings=[], progress_interval=1000.0,
                    launcher=types.SimpleNamespace(name="local", cluster=None), resume=False,
                    force=False, dry_run=False)
    return types.SimpleNamespace(**{**settings, **given})


def result(rows, failure=None, header=True):
    got = LaunchResult()
    got.rows, got.failure, got.header_seen = rows, failure, header
    got.meta = {"mpi_library": "scripted"} if header else {}
    return got


class Scripted(engine.Launch):
    """A launch whose attempts measure and fail as `script` says: [(rows, failure, header)]."""
    unit = "point"

    def __init__(self, name, sizes, script, ran):
        self.name = self.label = name
        self.sizes, self.script, self.ran = sizes, list(script), ran

    def command(self, todo):
        return ["bench", "--sizes", ",".join(map(str, todo))], {}

    def measure(self, argv, env, todo):
        self.ran.append((self.name, list(todo)))
        return result(*self.script.pop(0))

    def settle(self, todo, result):
        return todo[result.rows:]

    def failure_text(self, lost, failure, command):
        return f"{self.name} msg_size={engine.sizes_text(lost)}: {failure}; command: {command}"


class Protocol(engine.Protocol):
    columns = journal_columns = COLUMNS
    dropped_key = "dropped_truncated_line"

    def __init__(self, cfg, scripts):
        super().__init__(cfg)
        self.scripts, self.ran = scripts, []

    def load(self, found):
        self.found = found

    def dry_run_lines(self, found):
        return [f"# {len(self.scripts)} launches"]

    def header(self):
        return {"source": "test"}

    def journal_header(self):
        return {"source": "test", "table": "t.csv"}

    def total(self):
        return sum(len(sizes) for _, sizes, _ in self.scripts)

    def measured(self):
        return 0

    def launches(self, sweep):
        return [Scripted(name, sizes, script, self.ran) for name, sizes, script in self.scripts]

    def failed_text(self, failures):
        return f"{failures} failed"


def test_a_failed_size_is_given_up_and_the_launch_goes_on(tmp_path):
    cfg = config(tmp_path)
    protocol = Protocol(cfg, [("A", [1, 2, 3, 4], [(1, "crashed"), (2, None)]),
                              ("B", [1, 2], [(2, None)])])
    stream = io.StringIO()
    with pytest.raises(CollselError, match="^1 failed$"):
        engine.run(protocol, stream)
    assert protocol.ran == [("A", [1, 2, 3, 4]), ("A", [3, 4]), ("B", [1, 2])]
    meta = csvfile.read(cfg.out, "a sweep table").metadata
    assert meta["failed.1"] == "A msg_size=2: crashed; command: bench --sizes 1,2,3,4"
    assert meta["run.1.failed_points"] == "1"
    assert meta["mpi_library"] == "scripted"
    assert "collsel sweep: point failed, going on: A msg_size=2: crashed" in stream.getvalue()


def test_a_launch_without_a_header_gives_up_all_it_left(tmp_path):
    cfg = config(tmp_path)
    protocol = Protocol(cfg, [("A", [1, 2], [(2, None)]),
                              ("B", [1, 2, 3], [(0, "no header", False)])])
    with pytest.raises(CollselError, match="^3 failed$"):
        engine.run(protocol, io.StringIO())
    assert protocol.ran == [("A", [1, 2]), ("B", [1, 2, 3])]
    meta = csvfile.read(cfg.out, "a sweep table").metadata
    assert meta["failed.1"].startswith("B msg_size=1..3 (3 sizes): no header")


def test_a_first_launch_that_cannot_start_leaves_nothing(tmp_path):
    cfg = config(tmp_path)
    protocol = Protocol(cfg, [("A", [1, 2], [(0, "exited with status 1", False)]),
                              ("B", [1], [(1, None)])])
    with pytest.raises(startup.StartupFailure, match="instead of running the 1 other launch;"):
        engine.run(protocol, io.StringIO())
    assert protocol.ran == [("A", [1, 2])]
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_launch_failed_by_a_lost_node_names_it_and_the_sweep_goes_on(tmp_path):
    gone = "node n3 of the emulated cluster is gone (no network namespace collsel-n3)"
    cluster = types.SimpleNamespace(lost_text=lambda: gone)
    cfg = config(tmp_path, launcher=types.SimpleNamespace(name="hostfile", cluster=cluster))
    protocol = Protocol(cfg, [("A", [1, 2], [(0, "exited with status 255", False)]),
                              ("B", [1], [(1, None)])])
    stream = io.StringIO()
    with pytest.raises(engine.PointsFailed, match="^2 failed$"):
        engine.run(protocol, stream)
    assert protocol.ran == [("A", [1, 2]), ("B", [1])]
    meta = csvfile.read(cfg.out, "a sweep table").metadata
    assert meta["failed.1"].startswith(f"A msg_size=1..2 (2 sizes): {gone}: exited with status "
                                       "255; command: ")
    assert f"collsel sweep: point failed, going on: A msg_size=1..2 (2 sizes): {gone}" \
        in stream.getvalue()


def test_an_existing_table_needs_resume_or_force(tmp_path):
    cfg = config(tmp_path)
    (tmp_path / "t.csv").write_text("x\n")
    with pytest.raises(InputError, match="pass --resume to continue that sweep or --force"):
        engine.run(Protocol(cfg, []), io.StringIO())
    # a dry run reads what is there and writes nothing
    assert engine.dry_run(Protocol(config(tmp_path, dry_run=True), [])) == ["# 0 launches"]
    assert (tmp_path / "t.csv").read_text() == "x\n"
