"""A sweep whose first launch cannot even start stops there.

When the first launch of a run fails before the benchmark printed its header (the launcher
failed, or a rank died before MPI_Init completed, or the benchmark refused its arguments), every
other launch would fail the same way: rather than launching all of them, the sweep shows what
the launcher said (the last lines of its stderr) and what to try, and stops (exit status 1). A
sweep that had measured nothing before (no --resume) leaves no table behind, so the same command
can simply be run again once fixed. Later launches that fail keep the old behaviour: recorded,
and the sweep goes on.
"""
import os

from collsel.errors import CollselError
from collsel.sources.measure import launchers


class StartupFailure(CollselError):
    """The first launch of a sweep failed at start-up (exit status 1)."""


HINTS = {
    "srun": "check srun's MPI plugin: --srun-mpi PLUGIN (`srun --mpi=list` names them; Open "
            "MPI starts with pmix) and that the benchmark's MPI was built with it",
    "local": "run the command above by hand to see the whole error (check --mpirun and "
             "--launcher-args)",
    "hostfile": "run the command above by hand to see the whole error (check the hostfile, "
                "--mpirun and --launcher-args)",
}


def check(result, first, launcher, argv, env, label, left, progress):
    """Raise StartupFailure, after showing the launcher's message on `progress`, when the
    `first` launch of the run failed at start-up; `left`: launches that will not run."""
    if not first or result.failure is None or result.header_seen:
        return
    progress.message(
        f"collsel sweep: the first launch ({label}) failed before the benchmark started "
        f"measuring:\n  command: {launchers.render(argv, env)}\n  its last lines on stderr:\n"
        + "".join(f"    {line}\n" for line in result.stderr_last or ["(none)"])
        + f"  hint: {HINTS.get(launcher.name, HINTS['local'])}")
    raise StartupFailure(
        f"the first launch failed at start-up (it {_how(result.failure)}), "
        "so the sweep stopped "
        f"there instead of running the {left} other launch{'es' if left != 1 else ''}; see "
        "the launcher's lines and the hint above, then run the same command again")


def _how(failure):
    """How the launch ended, from run_launch's failure text ("benchmark exited with status 1:
    ..."): the launcher may have failed before any benchmark ran."""
    how = failure.split(": ", 1)[0][:200]
    return how[len("benchmark "):] if how.startswith("benchmark ") else how


def discard(paths):
    """Remove what a run that measured nothing created (files; directories left empty)."""
    for path in paths:
        try:
            if os.path.isdir(path):
                os.rmdir(path)
            else:
                os.unlink(path)
        except OSError:
            pass
