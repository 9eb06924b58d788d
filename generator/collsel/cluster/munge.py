"""The cluster's own munged: its own key, socket, PID and log files in the state directory, never
/etc/munge or /run/munge, so it neither uses nor disturbs a munge the host may run."""
import os

from collsel.cluster.system import run, start_daemon


def start(layout):
    # munged insists that its socket's directory is searchable by all and the key private.
    os.makedirs(layout.munge_dir, exist_ok=True)
    os.chmod(layout.munge_dir, 0o755)
    if not os.path.exists(layout.munge_key):
        run(["mungekey", "--create", "--keyfile", layout.munge_key])
    os.chmod(layout.munge_key, 0o400)
    start_daemon(["munged", f"--key-file={layout.munge_key}", f"--socket={layout.munge_socket}",
                  f"--pid-file={layout.munge_pid}", f"--log-file={layout.munge_log}",
                  f"--seed-file={layout.munge_seed}"], "munged", layout.munge_pid, layout.munge_log)
    run(["munge", "-n", "-S", layout.munge_socket])      # it answers
