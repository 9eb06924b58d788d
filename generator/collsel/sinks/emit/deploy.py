"""How an emitted file is put to use: the one text of each deploy line.

The Open MPI rules file's header (templates/ompi_rules.conf.j2), `collsel report`'s
recommendation box and `collsel tune`'s summary all render these lines from here. Each is the
start of a command line; the MPI program and its arguments follow it.
"""
import os
import shlex

from collsel.core.mpi.algorithms import DEFAULT_FAMILY

# (target, family) -> the launch line; {file} is the emitted file (a blob: a file, a directory
# of *.bin or a `:` list, as COLLSEL_TREES takes them), {lib} libcollsel.so (`libcollsel`).
DEPLOY = {
    ("ompi-rules", "openmpi"): "mpirun --mca coll_tuned_use_dynamic_rules 1 "
                               "--mca coll_tuned_dynamic_rules_filename {file}",
    # DEVICE_COLLECTIVES=none: Debian's ch4:ucx MPICH otherwise runs its device's own
    # composition first, which may never reach the MPIR selection the file replaces.
    ("mpich-json", "mpich"): "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE={file} "
                             "MPIR_CVAR_DEVICE_COLLECTIVES=none mpirun.mpich",
    ("blob", "openmpi"): "LD_PRELOAD={lib} COLLSEL_TREES={file} "
                         "mpirun.openmpi --mca coll_tuned_use_dynamic_rules 1 "
                         "-x LD_PRELOAD -x COLLSEL_TREES",
    ("blob", "mpich"): "mpirun.mpich -genv LD_PRELOAD {lib} -genv COLLSEL_TREES {file}",
    ("intel-json", "intel"): "I_MPI_TUNING={file} mpirun",
}

# Where the Makefile builds libcollsel (`make setup` and `make libcollsel`), per family.
LIBCOLLSEL = "build/libcollsel/{family}/libcollsel.so"
# Outside a checkout (collsel installed from a wheel) there is no C source to build it from:
# the line says where it comes from. The `<` makes a copied line fail loudly (no such file)
# instead of the loader ignoring a missing preload and the program running untuned.
NOT_BUILT = "<libcollsel.so: make libcollsel in a collsel checkout>"


def checkout():
    """The collsel checkout this package runs from (an editable install: make setup's .venv),
    or None (a wheel: no runtime sources beside it)."""
    root = os.path.abspath(__file__)
    for _ in range(5):          # deploy.py, emit, sinks, collsel, generator
        root = os.path.dirname(root)
    return root if os.path.isfile(os.path.join(root, "runtime", "libcollsel", "pmpi.c")) else None


def libcollsel(family=DEFAULT_FAMILY):
    """(absolute path of libcollsel.so for `family`, the command that builds it or None when it
    is built). A preload that does not exist is only a warning of ld.so, the program then runs
    untuned with exit status 0: so the line never names a library that is not there without
    building it first."""
    root = checkout()
    if root is None:
        return NOT_BUILT, None
    relative = LIBCOLLSEL.format(family=family)
    path = os.path.join(root, relative)
    return (shlex.quote(path),
            None if os.path.isfile(path) else f"make -C {shlex.quote(root)} {relative}")


def deploy_line(target, file, family=DEFAULT_FAMILY):
    """The command line that runs an MPI program with `file` (emitted for `target`) in effect,
    or None when the target has no such line (C sources are compiled into a program). The
    blob's line names libcollsel by its absolute path, built first when it is not yet."""
    line = DEPLOY.get((target, family))
    if line is None:
        return None
    lib, build = libcollsel(family) if "{lib}" in line else (None, None)
    line = line.format(file=shlex.quote(str(file)), lib=lib)
    return line if build is None else f"{build} && {line}"
