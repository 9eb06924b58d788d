"""collsel tune's output directory: its fixed layout, the recorded plan and the stages done.

    DIR/tune.json              the plan: collectives, grids, budgets, the sweep's options, machine
    DIR/progress.json          the stages done (a resumed tune skips them)
    DIR/summary.txt            the summary table (also printed at the end)
    DIR/rules.conf             Open MPI: one rules file for every tuned collective
    DIR/mpich_selection.json   MPICH: the selection file (the collectives it maps)
    DIR/intel_tuning.json      Intel MPI: its JSON tuning file (I_MPI_TUNING=DIR/intel_tuning.json)
    DIR/deploy.txt             what emit printed about it (precision, deferring cells)
    DIR/trees/<collective>.bin the trees as libcollsel blobs (COLLSEL_TREES=DIR/trees; not Intel)
    DIR/<collective>/table.csv           the sweep's table (+ table.csv.launches journal; Intel
                                         MPI: + table.csv.forcing/, each launch's tuning file)
    DIR/<collective>/tree/               build --recommend: tree.json, stats.json, decision.c/.h
    DIR/<collective>/report/             the report (index.html, report.json, plots)
    DIR/<collective>/log.txt             what build, emit and report printed
    DIR/<collective>/curve.csv           --replay: the anytime curve (no report, no rules)
    DIR/<collective>/curve.svg           --replay: the curve drawn
"""
from __future__ import annotations

import json
import os
import socket

from collsel.core.io.files import write_file
from collsel.core.io import jsonfile, values
from collsel.errors import InputError
from collsel.pipeline.tune.plan import TunePlan

PLAN = "tune.json"
PROGRESS = "progress.json"
SUMMARY = "summary.txt"
RULES = "rules.conf"
MPICH = "mpich_selection.json"
INTEL = "intel_tuning.json"
DEPLOY_LOG = "deploy.txt"
BLOBS = "trees"
FORMAT = 2           # 2: grids carry their P values and mode


def table(out, collective) -> str:
    return os.path.join(out, collective, "table.csv")


def tree_dir(out, collective) -> str:
    return os.path.join(out, collective, "tree")


def tree_json(out, collective) -> str:
    return os.path.join(tree_dir(out, collective), "tree.json")


def stats_json(out, collective) -> str:
    return os.path.join(tree_dir(out, collective), "stats.json")


def blobs(out) -> str:
    """The directory of every tuned collective's blob: libcollsel loads a directory's *.bin
    (COLLSEL_TREES=DIR), so this one is deployable as it stands."""
    return os.path.join(out, BLOBS)


def blob(out, collective) -> str:
    return os.path.join(blobs(out), f"{collective}.bin")


def report_dir(out, collective) -> str:
    return os.path.join(out, collective, "report")


def log(out, collective) -> str:
    return os.path.join(out, collective, "log.txt")


def curve(out, collective) -> str:
    """A replayed tune's anytime curve (pipeline/tune/curve.py)."""
    return os.path.join(out, collective, "curve.csv")


def curve_plot(out, collective) -> str:
    """The anytime curve drawn (sinks/report/curve_plot.py)."""
    return os.path.join(out, collective, "curve.svg")


def machine(launcher_name: str, replayed: str | None = None) -> str:
    """What the tune measures: the recorded table it replays, the Slurm cluster inside an
    allocation (its hosts change from one allocation to the next), else this host."""
    if replayed:
        return f"replay of {replayed}"
    cluster = os.environ.get("SLURM_CLUSTER_NAME")
    if launcher_name == "srun" and cluster:
        return f"Slurm cluster {cluster}"
    return f"host {socket.gethostname()}"


def check_new(out: str) -> None:
    """--out for a new tune: absent or an empty directory; a file, another tune or other files
    are refused (nothing there is touched)."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise InputError(f"--out {out} exists and is not a directory: collsel tune writes a "
                         "directory; choose another --out")
    if os.path.isdir(out) and os.listdir(out):
        if os.path.exists(os.path.join(out, PLAN)):
            recorded = _read(out).get("machine", "?")
            raise InputError(f"--out {out} holds a tune ({recorded}): pass --resume to "
                             "continue it, or choose another --out")
        raise InputError(f"--out {out} is not empty and holds no tune: choose a new or empty "
                         "directory")
    values.output_directory(out)


def load(out: str) -> TunePlan:
    """The recorded plan of the tune in `out`, for --resume; refused when `out` holds none or
    another machine's."""
    if not os.path.isfile(os.path.join(out, PLAN)):
        raise InputError(f"--resume: {out} holds no tune ({PLAN} missing): start one without "
                         "--resume")
    data = _read(out)       # whose tune it is, before the rest of it is read
    here = machine(data.get("launcher"), data.get("replay"))
    if data.get("machine") != here:
        raise InputError(f"--resume: {out} holds the tune of {data.get('machine')}, this is "
                         f"{here}: resume it there, or start a new tune in another directory")
    try:
        return TunePlan.from_json(data)
    except KeyError as e:
        raise InputError(f"{os.path.join(out, PLAN)}: a collsel tune plan without {e}") from None
    except (TypeError, ValueError):
        raise InputError(f"{os.path.join(out, PLAN)}: not a collsel tune plan of format "
                         f"{FORMAT}") from None


def _read(out: str) -> dict:
    path = os.path.join(out, PLAN)
    data = jsonfile.read(path)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(f"{path}: not a collsel tune plan of format {FORMAT}")
    return data


def has_blobs(mpi: str) -> bool:
    """Whether a tune of `mpi` writes libcollsel blobs: not Intel MPI's, whose presets are read
    in MPI_Init only (libcollsel cannot force one at run time)."""
    return mpi != "intel"


def create(out: str, plan: TunePlan) -> None:
    if has_blobs(plan.mpi):
        os.makedirs(blobs(out), exist_ok=True)
    for collective in plan.collectives:
        os.makedirs(os.path.join(out, collective), exist_ok=True)
    write_file(os.path.join(out, PLAN), dumps(plan))


def dumps(plan: TunePlan) -> str:
    """tune.json's text."""
    return json.dumps({"format": FORMAT, **plan.to_json()}, indent=1) + "\n"


def done(out: str) -> set[str]:
    path = os.path.join(out, PROGRESS)
    return set(jsonfile.read(path).get("done", ())) if os.path.exists(path) else set()


def mark_done(out: str, stage: str) -> None:
    stages = sorted(done(out) | {stage})
    write_file(os.path.join(out, PROGRESS), json.dumps({"done": stages}, indent=1) + "\n")
