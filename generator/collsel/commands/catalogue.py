"""`collsel catalogue`: the built-in coll/tuned table checked against the installed Open MPI."""
from collsel.core import catalogue, csvfile
from collsel.core.algorithms import TUNED_ALGORITHMS
from collsel.sources.measure import ompi_info


def register(sub):
    p = sub.add_parser("catalogue", help="check the algorithm table against ompi_info",
                       description="Compare collsel's table of Open MPI coll/tuned algorithms "
                       "(ids, names, per-collective parameters of all 14 collectives) with what "
                       "'ompi_info --param coll tuned --level 9 --parsable' lists. Prints what "
                       "was compared (with the coll/tuned version), then one line per "
                       "difference: an algorithm, collective or parameter variable the MPI has "
                       "and the table lacks is shown, never skipped; exit status 0 when they "
                       "agree, 1 when they differ.")
    p.add_argument("--ompi-info", metavar="PROGRAM", default="ompi_info",
                   help="the ompi_info to run (default: ompi_info on PATH)")
    p.add_argument("--from-file", metavar="FILE",
                   help="read saved 'ompi_info ... --parsable' output instead of running it")
    p.set_defaults(run=run_catalogue)


def run_catalogue(args):
    if args.from_file:
        where = args.from_file
        text = "\n".join(csvfile.read_lines(args.from_file, "ompi_info output"))
    else:
        where = f"{args.ompi_info} {' '.join(ompi_info.ARGS)}"
        text = ompi_info.coll_tuned_text(args.ompi_info)
    cat = catalogue.parse_ompi_info(text, where)
    diffs = catalogue.differences(cat)
    print(catalogue.compared(cat))
    for line in diffs:
        print(line)
    if diffs:
        print(f"{len(diffs)} difference(s) between the table and {where}")
        return 1
    print(f"the table agrees with {where}: {len(TUNED_ALGORITHMS)} collectives, "
          f"{sum(len(a) for a in TUNED_ALGORITHMS.values())} algorithm ids")
    return 0
