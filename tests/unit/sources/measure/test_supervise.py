"""supervise on scripted launches (no MPI): run_launch takes a launcher's message on stdout before
the benchmark's header (mpirun's box when a node is gone) for a failed launch, never for the
header, and an exit status beyond the signals (255: mpirun's own failure) names no signal;
die_with_parent ends a launch with the sweep that started it, also when the sweep is killed
between the fork and the death signal's set-up (the child then never starts the launch)."""
import functools
import os
import subprocess
import sys

import pytest

from collsel.sources.measure import supervise
from collsel.sources.measure.supervise import run_launch


def _launch(script, **hooks):
    return run_launch([sys.executable, "-c", script], {}, [8], 30, lambda fields: None, **hooks)


def test_a_launcher_line_on_stdout_is_a_failed_launch_not_a_header():
    headers = []
    result = _launch("print('-' * 74); print('ORTE has lost communication with a remote "
                     "daemon.'); raise SystemExit(255)", on_header=headers.append)
    assert headers == []
    assert result.failure.startswith("unexpected benchmark output line '-----")
    assert not result.header_seen


def test_exit_status_255_names_no_signal_and_137_names_sigkill():
    assert _launch("raise SystemExit(255)").failure.startswith(
        "benchmark exited with status 255: ")
    assert _launch("raise SystemExit(137)").failure.startswith(
        "benchmark exited with status 137 (a rank died of signal 9): ")


linux_only = pytest.mark.skipif(sys.platform != "linux", reason="the death signal is Linux's")


def started(tmp_path, preexec_fn):
    """Whether a child run with `preexec_fn` got as far as its program (it writes a file)."""
    mark = tmp_path / "ran"
    proc = subprocess.Popen([sys.executable, "-c", f"open({str(mark)!r}, 'w').close()"],
                            start_new_session=True, preexec_fn=preexec_fn)
    assert proc.wait(timeout=60) == (0 if mark.exists() else 1)
    return mark.exists()


@linux_only
def test_a_child_of_a_living_supervisor_starts(tmp_path):
    assert started(tmp_path, supervise.die_with_parent())


@linux_only
def test_a_child_whose_supervisor_died_before_the_death_signal_was_set_does_not_start(tmp_path):
    # the supervisor the child was forked for is gone: its parent now is someone else (here:
    # the pid recorded is not the parent's, as after a SIGKILL between the fork and the prctl)
    gone = functools.partial(supervise._die_with_parent, os.getpid() + 1)
    assert not started(tmp_path, gone)
