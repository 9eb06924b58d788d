"""`collsel catalogue`: the built-in algorithm tables checked against the installed MPI (Open
MPI's coll/tuned through ompi_info, MPICH's algorithm variables through MPI_T)."""
from collsel.core.io import csvfile
from collsel.core.mpi import catalogue
from collsel.core.mpi.algorithms import (MPICH_READ_FROM, MPICH_UNMEASURED, MPICH_VERSIONS,
                                         TUNED_ALGORITHMS)
from collsel.sources.measure import mpich_cvars, ompi_info
from collsel.commands import add_command


def register(sub):
    p = add_command(sub, "catalogue",
                    description="Compare collsel's table of algorithms with the installed "
                    "MPI. Open MPI (default): the coll/tuned ids, names and per-collective "
                    "parameters of all 14 collectives against what 'ompi_info --param coll "
                    "tuned --level 9 --parsable' lists. MPICH (--mpi mpich): the names of "
                    "every blocking collective's MPIR_CVAR_<COLL>_INTRA_ALGORITHM, as MPI_T "
                    "describes them (a small MPI_T program built with --mpicc). Prints what "
                    "was compared, then one line per difference: an algorithm, collective or "
                    "parameter variable the MPI has and the table lacks is shown, never "
                    "skipped; exit status 0 when they agree, 1 when they differ.")
    p.add_argument("--mpi", choices=("openmpi", "mpich"), default="openmpi",
                   help="the MPI whose table is checked (default openmpi)")
    p.add_argument("--ompi-info", metavar="PROGRAM", default="ompi_info",
                   help="the ompi_info to run (default: ompi_info on PATH)")
    p.add_argument("--mpicc", metavar="PROGRAM", default="mpicc.mpich",
                   help="--mpi mpich: MPICH's compiler wrapper (default mpicc.mpich)")
    p.add_argument("--from-file", metavar="FILE",
                   help="read saved output instead of running the MPI's tool ('ompi_info ... "
                   "--parsable'; MPICH: collsel's mpi_t_cvars lines NAME<TAB>DESCRIPTION)")
    p.set_defaults(run=run_catalogue)


def _text(args, what, where, read):
    """(text, where it came from): --from-file's, else what read() returns."""
    if args.from_file:
        return "\n".join(csvfile.read_lines(args.from_file, what)), args.from_file
    return read(), where


def run_catalogue(args):
    if args.mpi == "mpich":
        return _run_mpich(args)
    text, where = _text(args, "ompi_info output", f"{args.ompi_info} {' '.join(ompi_info.ARGS)}",
                        lambda: ompi_info.coll_tuned_text(args.ompi_info))
    cat = catalogue.parse_ompi_info(text, where)
    return _report(catalogue.compared(cat), catalogue.differences(cat), where, TUNED_ALGORITHMS)


def _run_mpich(args):
    text, where = _text(args, "MPI_T control variable list", f"MPI_T of {args.mpicc}'s MPI",
                        lambda: mpich_cvars.algorithm_cvars_text(args.mpicc))
    descriptions = catalogue.mpich_descriptions(text, where)
    # compared with the release whose names differ least (MPICH_VERSIONS: 4.0.2's, 5.0.2's):
    # an MPICH of another version shows what it adds and lacks against the closest one
    release = min(MPICH_VERSIONS, key=lambda r: len(
        catalogue.mpich_differences(descriptions, _mpich_table(r))))
    diffs = catalogue.mpich_differences(descriptions, _mpich_table(release))
    tables = _mpich_table(release)
    return _report(catalogue.mpich_compared(descriptions, tables), diffs, where, tables,
                   f"the table of MPICH {MPICH_READ_FROM[release]}")


def _mpich_table(release):
    """{collective: {position: name}} of a release, the unmeasured csel collectives included."""
    return {**{c: dict(enumerate(names)) for c, names in MPICH_VERSIONS[release].items()},
            **MPICH_UNMEASURED}


def _report(compared, diffs, where, tables, what="the table"):
    print(compared)
    for line in diffs:
        print(line)
    if diffs:
        print(f"{len(diffs)} difference(s) between {what} and {where}")
        return 1
    print(f"{what} agrees with {where}: {len(tables)} collectives, "
          f"{sum(len(a) for a in tables.values())} algorithm ids")
    return 0
