"""supervise.run_launch on scripted launches (no MPI): a launcher's message on stdout before the
benchmark's header (mpirun's box when a node is gone) is a failed launch, never taken for the
header; an exit status beyond the signals (255: mpirun's own failure) names no signal."""
import sys

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
