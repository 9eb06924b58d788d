"""supervise.die_with_parent: a launch ends with the sweep that started it, also when the sweep
is killed between the fork and the death signal's set-up (the child then never starts the
launch)."""
import functools
import os
import subprocess
import sys

import pytest

from collsel.sources.measure import supervise

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the death signal is Linux's")


def started(tmp_path, preexec_fn):
    """Whether a child run with `preexec_fn` got as far as its program (it writes a file)."""
    mark = tmp_path / "ran"
    proc = subprocess.Popen([sys.executable, "-c", f"open({str(mark)!r}, 'w').close()"],
                            start_new_session=True, preexec_fn=preexec_fn)
    assert proc.wait(timeout=60) == (0 if mark.exists() else 1)
    return mark.exists()


def test_a_child_of_a_living_supervisor_starts(tmp_path):
    assert started(tmp_path, supervise.die_with_parent())


def test_a_child_whose_supervisor_died_before_the_death_signal_was_set_does_not_start(tmp_path):
    # the supervisor the child was forked for is gone: its parent now is someone else (here:
    # the pid recorded is not the parent's, as after a SIGKILL between the fork and the prctl)
    gone = functools.partial(supervise._die_with_parent, os.getpid() + 1)
    assert not started(tmp_path, gone)
