"""`collsel hier`: hierarchical methods in a performance table against the flat ones: per
(P, m) and flat algorithm, the speedup of its best hierarchical form (same algorithm at both
levels) over it and over the MPI's default, the measured best G against the model's G
(models/reduce.py, Hasanov & Lastovetsky), and the groups' split cost from benchmark headers."""
import re
import sys

import numpy as np

from collsel.core.io import csvfile, values
from collsel.core.maps import table as table_mod
from collsel.core.mpi import algorithms
from collsel.errors import InputError
from collsel.research.models import reduce as reduce_model
from collsel.commands import add_command


def register(sub):
    p = add_command(sub, "hier",
                    description="Reads a table holding hierarchical methods "
                    "(collsel sweep --algorithms hier:G:INNER:OUTER) and prints, per "
                    "(P, m) and flat algorithm A with a hierarchical form hier:G:A:A, the "
                    "flat time, the best hierarchical time and its G, the model's optimal G "
                    "for A (Hockney model, Hasanov & Lastovetsky), the speedup over A and "
                    "over the default (algorithm 0).")
    p.add_argument("table", help="performance table (CSV)")
    p.add_argument("--split", nargs="*", default=[], metavar="FILE",
                   help="collsel_bench outputs whose '#@hier_split_us=' header lines give the "
                        "cost of making each method's group and leader communicators")
    p.add_argument("--alpha", type=float, default=50.0, help="model latency, us (default 50)")
    p.add_argument("--beta", type=float, default=1e-3,
                   help="model time per byte, us (default 1e-3: 1 GB/s)")
    p.add_argument("--gamma", type=float, default=2e-4,
                   help="model reduction time per byte, us (reduce only; default 2e-4)")
    p.add_argument("--title", default="", help="heading printed above the table")
    p.set_defaults(run=run_hier)


def split_costs(paths):
    """{(P, algorithm id): microseconds} from benchmark outputs (#@nprocs and #@hier_split_us)."""
    out = {}
    for path in paths:
        text = "\n".join(csvfile.read_lines(path, "a collsel_bench output"))
        p = re.search(r"^#@nprocs=(\d+)$", text, re.M)
        line = re.search(r"^#@hier_split_us=(\S+)$", text, re.M)
        if not p or not line:
            raise InputError(f"{path}: no '#@nprocs=' and '#@hier_split_us=' header lines "
                             "(a collsel_bench output with hierarchical --methods?)")
        for item in line.group(1).split(","):
            alg, _, us = item.partition("=")
            where = f"{path}: #@hier_split_us"
            out[(int(p.group(1)), values.integer(alg, "method id", 0, 2**31 - 1, where))] = \
                values.time_us(us, "split time", where)
    return out


def comparison_rows(t, alpha, beta, gamma, splits):
    """One dict per (P, m, flat algorithm) with a hierarchical form in the table."""
    coll = str(t.collective[0])
    rows = []
    keys = sorted(set(zip(t.comm_size.tolist(), t.msg_size.tolist())))
    for p, m in keys:
        cell = (t.comm_size == p) & (t.msg_size == m)
        times = {int(a): float(x) for a, s, x in zip(t.algorithm[cell], t.segsize[cell],
                                                     t.time_us[cell]) if s == 0}
        hier = {}
        for a, x in times.items():
            h = algorithms.hier_parts(a)
            if h and h.inner == h.outer:
                hier.setdefault(h.inner, []).append((x, h.groups, a))
        for flat, forms in sorted(hier.items()):
            best_time, best_g, best_id = min(forms)
            base = times.get(flat)
            default = times.get(0)
            rows.append({
                "P": p, "m": m, "algorithm": algorithms.algorithm_name(coll, flat),
                "flat_us": base, "default_us": default, "best_hier_us": best_time,
                "best_G": best_g if base is None or best_time < base else 1,
                "G_measured": sorted(g for _, g, _ in forms),
                "model_G": reduce_model.model_groups(coll, flat, p, m, alpha, beta, gamma),
                "speedup_flat": base / best_time if base else None,
                "speedup_default": default / best_time if default else None,
                "split_us": splits.get((p, best_id)),
            })
    return coll, rows


def _fmt(x, digits=1):
    return "-" if x is None else f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def run_hier(args):
    for flag in ("alpha", "beta", "gamma"):     # finite and >= 0 before the table is read
        setattr(args, flag, values.number(getattr(args, flag), f"--{flag}", 0, 1e9))
    t = table_mod.read_table(args.table)
    if len(t.time_us) == 0:
        raise InputError(f"{args.table}: no rows")
    coll, rows = comparison_rows(t, args.alpha, args.beta, args.gamma, split_costs(args.split))
    if not rows:
        raise InputError(f"{args.table}: no hierarchical method hier:G:A:A beside a flat one")
    out = [f"### {args.title}" if args.title else f"### hierarchical {coll}", "",
           "| P | m | A | flat A µs | default µs | best hier µs | measured best G (1 = flat) | "
           "G measured | model G | speedup vs A | speedup vs default | split µs |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['P']} | {r['m']} | {r['algorithm']} | {_fmt(r['flat_us'])} | "
                   f"{_fmt(r['default_us'])} | {_fmt(r['best_hier_us'])} | {r['best_G']} | "
                   f"{','.join(map(str, r['G_measured']))} | {_fmt(r['model_G'])} | "
                   f"{_fmt(r['speedup_flat'], 2)} | {_fmt(r['speedup_default'], 2)} | "
                   f"{_fmt(r['split_us'])} |")
    speedups = np.array([r["speedup_flat"] for r in rows if r["speedup_flat"]])
    agree = sum(1 for r in rows if r["model_G"] is not None and r["best_G"] == r["model_G"])
    modelled = sum(1 for r in rows if r["model_G"] is not None)
    out += ["", f"{len(rows)} (P, m, A) points; best hierarchical form faster than flat A in "
            f"{int((speedups > 1).sum())}, median speedup {np.median(speedups):.2f}; "
            f"measured best G = model G in {agree} of {modelled} modelled points "
            f"(model: Hockney alpha={args.alpha} us, beta={args.beta} us/B, gamma="
            f"{args.gamma if coll == 'reduce' else 0} us/B; G among the divisors of P)", ""]
    sys.stdout.write("\n".join(out) + "\n")
    return 0
