"""`collsel profile --out FILE -- LAUNCH...`: run an unmodified MPI program under libcollsel in
census mode (COLLSEL_CENSUS, runtime/libcollsel/census.c), merge the ranks' census files into
one profile (core/io/profile.py) and print which collectives take the program's time, at which P
and m. `collsel profile --show FILE` prints the summary of a profile written before."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from collsel.core.io import files, profile
from collsel.core.mpi.method_text import size_text
from collsel.errors import CollselError, InputError, printable
from collsel.sinks.emit import deploy
from collsel.sources.measure import coll_probe
from collsel.commands import add_command
from collsel.commands.options import launch_words

CENSUS_ENV = "COLLSEL_CENSUS"
TOP = 5                 # collectives in the summary
POINTS_SHOWN = 3        # points per collective in the summary
# a launcher of the MPIs `make setup-mpis` installs: build/mpis/<NAME>/bin/mpirun
_SETUP_MPI = re.compile(r".*/build/mpis/([A-Za-z0-9_.-]+)/bin/[^/]+")


def register(sub):
    p = add_command(
        sub, "profile",
        description="Run LAUNCH (the command that starts your MPI program, e.g. `mpirun -n 4 "
        "./app`; Open MPI's mpirun, MPICH's mpiexec/mpirun (hydra) or srun) with libcollsel "
        "preloaded in census mode (COLLSEL_CENSUS): every rank counts, per collective, "
        "communicator size P, message size m (in bytes, as the MPI's decision and collsel's "
        "trees compute it) and processes per node, the calls the program makes and their time, "
        "and writes them at MPI_Finalize; the ranks' files are merged into one JSON profile "
        "(FILE, written whole or not at all): per point the calls, their total and median "
        "time and the share of the program's wall time (MPI_Init to MPI_Finalize, summed over "
        "the ranks) spent there. Prints the collectives that take the most time with their P "
        "and m. The program is not modified or rebuilt; its calls run as without the library "
        "unless COLLSEL_TREES is also set (then the profile is the tuned run's). Exit 0 with a "
        "profile, 1 when the program failed or wrote no census, 2 for bad input.")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--out", metavar="FILE", help="where to write the profile (JSON)")
    what.add_argument("--show", metavar="FILE",
                      help="print the summary of a profile written before (nothing is run)")
    p.add_argument("--mpi", metavar="NAME",
                   help="which libcollsel build to preload: openmpi or mpich (Debian's), or "
                   "the name of an MPI of make setup-mpis (openmpi5, mpich5); default: the "
                   "launcher's (build/mpis/NAME/bin/mpirun is NAME; srun needs --mpi)")
    p.add_argument("--libcollsel", metavar="PATH",
                   help="the libcollsel.so to preload (default: the checkout's build for --mpi)")
    p.add_argument("--census-dir", metavar="DIR",
                   help="where the ranks write their census files (default: a new directory "
                   "under the system's temporary directory, removed afterwards); on several "
                   "nodes it must be on a file system every node shares")
    p.add_argument("--top", type=int, default=TOP, metavar="N",
                   help=f"collectives in the summary (default {TOP})")
    p.add_argument("launch", nargs=argparse.REMAINDER, metavar="-- LAUNCH...",
                   help="the launch command, after --")
    p.set_defaults(run=run_profile)


def _launcher(words):
    """(index of the launcher word, its kind: 'openmpi', 'mpich' or 'srun')."""
    try:
        at = coll_probe.launcher_index(words)
    except InputError:
        raise InputError(f"LAUNCH '{' '.join(words)[:120]}': no MPI launcher word (mpirun, "
                         "mpiexec, srun): give the command that starts the program, e.g. "
                         "`collsel profile --out profile.json -- mpirun -n 4 ./app`") from None
    word = words[at]
    if os.path.basename(word) == "srun":
        return at, "srun"
    family = coll_probe.launcher_family(word)
    if family not in ("openmpi", "mpich"):
        raise InputError(f"LAUNCH: '{word}' is {'Intel MPI' if family else 'no launcher'} "
                         "collsel's libcollsel is built for (Open MPI's mpirun, MPICH's hydra, "
                         "srun)")
    return at, family


def _library(args, word, kind):
    """The libcollsel.so to preload, as an absolute path."""
    if args.libcollsel:
        path = os.path.abspath(args.libcollsel)
        if not os.path.isfile(path):
            raise InputError(f"--libcollsel {args.libcollsel}: no such file")
        return path
    name = args.mpi
    if name is None:
        setup_mpi = _SETUP_MPI.fullmatch(os.path.realpath(shutil.which(word) or word))
        name = setup_mpi.group(1) if setup_mpi else kind
        if name == "srun":
            raise InputError("LAUNCH is srun: say which MPI the program runs with --mpi "
                             "(openmpi, mpich, openmpi5, mpich5)")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise InputError(f"--mpi {name!r}: not an MPI name (openmpi, mpich, openmpi5, mpich5)")
    root = deploy.checkout()
    if root is None:
        raise InputError("this collsel has no checkout beside it to find libcollsel in: give "
                         "--libcollsel PATH (make libcollsel in a collsel checkout)")
    relative = deploy.LIBCOLLSEL.format(family=name)
    path = os.path.join(root, relative)
    if not os.path.isfile(path):
        raise InputError(f"{path}: not built: make -C {root} {relative}")
    return path


def with_census(words, at, kind, library, prefix, env=None):
    """LAUNCH with libcollsel preloaded (before the environment's LD_PRELOAD) and COLLSEL_CENSUS
    set in every rank, in the launcher's own words right after the launcher word."""
    env = os.environ if env is None else env
    if any("LD_PRELOAD" in w for w in words[at + 1:]):
        raise InputError("LAUNCH sets LD_PRELOAD itself: set it in the environment instead "
                         "(collsel profile puts libcollsel before it)")
    preload = ":".join([library] + ([env["LD_PRELOAD"]] if env.get("LD_PRELOAD") else []))
    if kind == "openmpi":
        extra = ["-x", f"LD_PRELOAD={preload}", "-x", f"{CENSUS_ENV}={prefix}"]
    elif kind == "mpich":
        extra = ["-genv", "LD_PRELOAD", preload, "-genv", CENSUS_ENV, prefix]
    else:
        extra = [f"--export=ALL,LD_PRELOAD={preload},{CENSUS_ENV}={prefix}"]
    return [*words[:at + 1], *extra, *words[at + 1:]]


def _census_dir(args):
    if args.census_dir is None:
        return tempfile.mkdtemp(prefix="collsel-profile-"), True
    directory = os.path.abspath(args.census_dir)
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        raise InputError(f"--census-dir {args.census_dir}: cannot create it: {e.strerror}") \
            from None
    if profile.census_files(os.path.join(directory, "census")):
        raise InputError(f"--census-dir {args.census_dir}: holds census files of an earlier "
                         "run: give an empty directory")
    return directory, False


def run_profile(args):
    if args.top < 1:
        raise InputError(f"--top {args.top}: give 1 or more")
    if args.show:
        if args.launch and args.launch != ["--"]:
            raise InputError("--show FILE runs nothing: give no LAUNCH")
        print_summary(profile.read(args.show), args.show, args.top)
        return 0
    words = launch_words(args, "collsel profile --out profile.json")
    at, kind = _launcher(words)
    library = _library(args, words[at], kind)
    if os.path.isdir(args.out):
        raise InputError(f"--out {args.out}: is a directory")
    directory, made = _census_dir(args)
    prefix = os.path.join(directory, "census")
    try:
        argv = with_census(words, at, kind, library, prefix)
        sys.stdout.flush()
        started = time.monotonic()
        try:
            status = subprocess.run(argv).returncode
        except OSError as e:
            raise InputError(f"LAUNCH: cannot run '{argv[0]}': {e.strerror}") from None
        launch_s = time.monotonic() - started
        if status != 0:
            raise CollselError(f"the launch exited with status {status}"
                               + (" (timeout's: the program ran too long)" if status == 124
                                  else "") + f"; no profile written to {args.out}")
        merged = {**profile.merge_prefix(prefix, words), "launch_s": round(launch_s, 3)}
        files.write_file(args.out, profile.dumps(merged))
    finally:
        if made:
            shutil.rmtree(directory, ignore_errors=True)
    print_summary(merged, args.out, args.top)
    return 0


def _percent(share):
    return f"{100 * share:.2f} %" if share < 0.1 else f"{100 * share:.1f} %"


def _point(entry):
    ppn = f"ppn={entry['ppn']}" if entry["ppn"] >= 0 else "inter"
    return (f"P={entry['comm_size']} m={size_text(entry['m'])} {ppn}: "
            f"{_percent(entry['share'])}, {entry['calls_per_rank']} calls/rank, median "
            f"{_time_text(entry['median_us'])}")


def _time_text(us):
    return f"{us:.3g} us" if us < 1000 else f"{us / 1000:.3g} ms"


def print_summary(doc, path, top):
    wall = doc["wall_time_s"]
    in_collectives = sum(e["share"] for e in doc["entries"])
    library = " ".join(doc["library"].split(",")[0].split())
    print(printable(f"collsel profile: {doc['ranks']} ranks on {doc['hosts']} host(s), "
                    f"{library}; wall time {wall['mean']:.3g} s per rank "
                    f"(mean; max {wall['max']:.3g} s), {_percent(in_collectives)} of it in "
                    f"collectives; {len(doc['entries'])} points -> {path}"))
    if "launch_s" in doc:   # the census overhead is this against the program's own launch
        print(f"launch: {doc['launch_s']:.3g} s wall, launcher start to exit, under census mode")
    if doc["dropped_calls"]:
        print(f"note: {doc['dropped_calls']} calls at points beyond the ranks' tables are "
              "counted in no point")
    rows = profile.by_collective(doc)
    if not rows:
        print("no collective calls")
        return
    print("top collectives by time share (and their largest points):")
    width = max(len(c) for c, *_ in rows[:top])
    for collective, share, _, calls, entries in rows[:top]:
        print(f"  {collective:<{width}}  {_percent(share):>8}  {calls} calls over the ranks")
        for entry in entries[:POINTS_SHOWN]:
            print(f"  {'':<{width}}    {_point(entry)}")
        if len(entries) > POINTS_SHOWN:
            print(f"  {'':<{width}}    +{len(entries) - POINTS_SHOWN} more points")
    if len(rows) > top:
        print(f"  ({len(rows) - top} more collectives, {_percent(sum(r[1] for r in rows[top:]))})")
