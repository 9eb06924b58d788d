"""`collsel catalogue`: the built-in algorithm tables checked against the installed MPI (Open
MPI's coll/tuned through ompi_info, MPICH's algorithm variables through MPI_T)."""
from collsel.core import catalogue, csvfile
from collsel.core.algorithms import MPICH_ALGORITHMS, MPICH_UNMEASURED, TUNED_ALGORITHMS
from collsel.sources.measure import mpich_cvars, ompi_info


def register(sub):
    p = sub.add_parser("catalogue", help="check the algorithm table against the installed MPI",
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
    tables = {**MPICH_ALGORITHMS, **MPICH_UNMEASURED}
    return _report(catalogue.mpich_compared(descriptions, tables),
                   catalogue.mpich_differences(descriptions, tables), where, tables)


def _report(compared, diffs, where, tables):
    print(compared)
    for line in diffs:
        print(line)
    if diffs:
        print(f"{len(diffs)} difference(s) between the table and {where}")
        return 1
    print(f"the table agrees with {where}: {len(tables)} collectives, "
          f"{sum(len(a) for a in tables.values())} algorithm ids")
    return 0
