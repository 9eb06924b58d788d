"""A node of the emulated cluster lost in the middle of `collsel tune --cluster` costs the
launches that need it, not the tune (issue 40 item 5). Its own 3-node cluster (the fixed names
free: conftest.cluster_names_free); a small tune of bcast and reduce on 2x1 and 3x1; node n3 is
lost while a bcast launch runs ranks on it, as a crashed machine is: its link cut, its processes
killed, its network namespace deleted. The launch in flight and every later one on n3 fail, each
with one line naming the node and the launch; the tune measures the rest, builds both trees,
exits 1 with a summary saying what was lost and records no stage of the lost collectives done,
leaving no temporary file; `--resume` once the node is back (the cluster brought up again)
measures what was lost and exits 0. `cluster down` leaves no namespace and no process.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

from collsel.cluster import network, processes
from collsel.core.io import csvfile
from collsel.sources.sweep import journal as sweep_journal
from conftest import cluster_command, outside_tmp

STATE = "/var/lib/collsel/node-lost-test"        # outside /tmp, not the session cluster's
LOST = "n3"
TUNE_TIMEOUT_S = 240
TUNE = ["--collectives", "bcast,reduce", "--nodes", "2,3", "--ppn", "1", "--msg-sizes", "1K,64K",
        "--budget", "40s", "--time-cap", "0.002", "--timeout", "20", "--progress-interval",
        "1000", "--strategy", "coarse-refine"]     # 3 coarse launches of each P, all lost at P=3
GONE = f"node {LOST} of the emulated cluster is gone (no network namespace collsel-{LOST})"
FAILED = re.compile(r"^collsel sweep: launch failed, going on: P=3 \(3 nodes x 1\) "
                    r"launch=(\d+) msg_size=1024\.\.65536 \(2 sizes\) \(all methods\): "
                    + re.escape(GONE) + ": ")


def _tune(*args):
    return [sys.executable, "-m", "collsel.cli", "tune", *map(str, args)]


def _in_namespace(inode, word=""):
    """PIDs running in the network namespace of `inode` whose command line holds `word`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}/ns/net").st_ino != inode:
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if word in cmdline:
            found.append(int(entry))
    return found


def _lose_node_when_it_runs_ranks(node, tune, limit_s=120):
    """Once a benchmark rank runs on `node`, lose the node as a crashed machine is lost: its
    link cut (nothing reaches it any more), every process in it killed, its namespace deleted."""
    inode = os.stat(f"{processes.NETNS_DIR}/collsel-{node}").st_ino
    deadline = time.monotonic() + limit_s
    while not _in_namespace(inode, "collsel_bench"):
        assert tune.poll() is None, f"the tune ended before a launch ran on {node}"
        assert time.monotonic() < deadline, f"no benchmark rank on {node} in {limit_s} s"
        time.sleep(0.02)
    subprocess.run(["ip", "link", "delete", f"collsel-{node}-h"], check=True, timeout=10)
    for pid in _in_namespace(inode):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    subprocess.run(["ip", "netns", "delete", f"collsel-{node}"], check=True, timeout=10)


def _rows(path):
    doc = csvfile.read(str(path))
    return doc.metadata, [dict(zip(doc.header, f)) for _, f in doc.rows]


def _launch_status(table):
    """{launch key: its status} of the journal's `# launch.` marks (the last of a key: a resumed
    sweep marks a launch it measured again)."""
    meta = csvfile.read(sweep_journal.journal_path(str(table))).metadata
    return {k: re.search(r"status=(\w+) sizes=(\d+)", v).groups() for k, v in meta.items()
            if k.startswith("launch.")}


def _temporary_files(out):
    return [os.path.join(d, f) for d, _, files in os.walk(out) for f in files
            if f.startswith(".tmp-")]


def _up():
    done = cluster_command("up", "--nodes", "3", "--state-dir", STATE)
    assert done.returncode == 0, done.stderr


def test_a_node_lost_mid_tune_costs_its_launches_not_the_tune(cluster_names_free, tmp_path):
    work = outside_tmp(tmp_path)        # outside_tmp keeps the name: what a run left goes
    shutil.rmtree(work, ignore_errors=True)
    out = work / "tune"
    os.makedirs(work)
    env = {**os.environ, "COLLSEL_CLUSTER_DIR": STATE}
    _up()
    try:
        with open(tmp_path / "stderr", "w+") as err:
            tune = subprocess.Popen(_tune("--out", out, "--cluster", STATE, *TUNE), env=env,
                                    stdout=subprocess.PIPE, stderr=err, text=True)
            try:
                _lose_node_when_it_runs_ranks(LOST, tune)
                stdout, _ = tune.communicate(timeout=TUNE_TIMEOUT_S)
            finally:
                if tune.poll() is None:
                    tune.kill()
                    tune.wait()
                err.seek(0)
                stderr = err.read()
                print(stderr, file=sys.stderr)      # shown when the test fails
        assert tune.returncode == 1, stderr

        # Each failed launch: one line naming the lost node and the launch; bcast's in flight
        # and those after it, all three of reduce (run after the loss).
        failed = {"bcast": [], "reduce": []}
        stage = None
        for line in stderr.splitlines():
            started = re.match(r"collsel tune: \[\d+/\d+\] (\w+) (\w+) ", line)
            if started:
                stage = started.groups()
            match = FAILED.match(line)
            if match and stage and stage[1] == "coarse":
                failed[stage[0]].append(int(match.group(1)))
        assert failed["bcast"] and failed["reduce"] == [1, 2, 3], stderr
        assert "Traceback" not in stderr and "collsel: error" not in stderr

        # The tables: the failures recorded, everything on n1,n2 measured.
        for c in ("bcast", "reduce"):
            table = out / c / "table.csv"
            meta, rows = _rows(table)
            reasons = [v for k, v in meta.items() if k.startswith("failed.")]
            assert reasons and all(v.startswith("P=3 (3 nodes x 1) launch=")
                                   and GONE in v for v in reasons), reasons
            two = [r for r in rows if r["comm_size"] == "2"]
            assert {r["msg_size"] for r in two} == {"1024", "65536"}
            assert all(int(r["launches"]) >= 3 for r in two)
            marks = _launch_status(table)
            assert all(marks[f"launch.2x1.{k}"] == ("ok", "2") for k in (1, 2, 3)), marks
            assert all(marks[f"launch.3x1.{k}"] == ("failed", "0") for k in failed[c]), marks
            assert os.path.isfile(out / c / "tree" / "tree.json")
            assert os.path.isfile(out / c / "report" / "index.html")
        assert not [r for r in _rows(out / "reduce" / "table.csv")[1] if r["comm_size"] == "3"]

        # The summary says what was lost and how to measure it again; no stage of a lost
        # collective (nor the deploy file) is recorded done; nothing half written.
        with open(out / "summary.txt") as f:
            summary = f.read()
        assert stdout == summary
        lost = [line for line in summary.splitlines() if line.startswith("lost: ")]
        assert [line.split(":")[1].strip() for line in lost] == ["bcast", "reduce",
                                                                  "bcast, reduce"], summary
        assert f"collsel tune --resume --out {out}" in lost[-1]
        assert [f"collsel tune: {line}" for line in lost] == stderr.splitlines()[-3:]
        assert not os.path.exists(out / "progress.json")
        assert not _temporary_files(out)

        # The node back (the cluster brought up again): --resume measures what was lost.
        assert cluster_command("down", "--state-dir", STATE).returncode == 0
        _up()
        done = subprocess.run(_tune("--resume", "--out", out), env=env, capture_output=True,
                              text=True, timeout=TUNE_TIMEOUT_S)
        assert done.returncode == 0, done.stderr
        assert "lost: " not in done.stdout and "launch failed" not in done.stderr
        for c in ("bcast", "reduce"):
            _, rows = _rows(out / c / "table.csv")
            three = [r for r in rows if r["comm_size"] == "3"]
            assert {r["msg_size"] for r in three} == {"1024", "65536"}, c
            marks = _launch_status(out / c / "table.csv")
            assert all(marks[f"launch.3x1.{k}"] == ("ok", "2") for k in (1, 2, 3)), marks
        assert not _temporary_files(out)
    finally:
        down = cluster_command("down", "--state-dir", STATE)
        shutil.rmtree(work, ignore_errors=True)
    assert down.returncode == 0, down.stderr
    assert network.existing_netns() == [] and network.existing_links() == []
    assert processes.find([STATE]) == []
