"""How an emitted file is put to use: the one text of each deploy line.

The Open MPI rules file's header (templates/ompi_rules.conf.j2) and `collsel report`'s
recommendation box both render these lines from here. Each is the start of a command line; the
MPI program and its arguments follow it.
"""
from collsel.core.algorithms import DEFAULT_FAMILY

# (target, family) -> the launch line; {file} is the emitted file (a blob: a file, a directory
# of *.bin or a `:` list, as COLLSEL_TREES takes them).
DEPLOY = {
    ("ompi-rules", "openmpi"): "mpirun --mca coll_tuned_use_dynamic_rules 1 "
                               "--mca coll_tuned_dynamic_rules_filename {file}",
    # DEVICE_COLLECTIVES=none: Debian's ch4:ucx MPICH otherwise runs its device's own
    # composition first, which may never reach the MPIR selection the file replaces.
    ("mpich-json", "mpich"): "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE={file} "
                             "MPIR_CVAR_DEVICE_COLLECTIVES=none mpirun.mpich",
    ("blob", "openmpi"): "LD_PRELOAD=build/libcollsel/openmpi/libcollsel.so COLLSEL_TREES={file} "
                         "mpirun.openmpi --mca coll_tuned_use_dynamic_rules 1 "
                         "-x LD_PRELOAD -x COLLSEL_TREES",
    ("blob", "mpich"): "mpirun.mpich -genv LD_PRELOAD build/libcollsel/mpich/libcollsel.so "
                       "-genv COLLSEL_TREES {file}",
}


def deploy_line(target, file, family=DEFAULT_FAMILY):
    """The command line that runs an MPI program with `file` (emitted for `target`) in effect,
    or None when the target has no such line (C sources are compiled into a program)."""
    line = DEPLOY.get((target, family))
    return None if line is None else line.format(file=file)
