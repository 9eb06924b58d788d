"""The end of `make demo`: one short block per collective from what `collsel build --recommend`
wrote (tree.json, stats.json): the recommended methods by name, the out-of-sample mean penalties
of the tree, of the MPI's default and of the best fixed method per kind of fold, the nested
figure of the recommendation (its choice cross-validated too), the warnings, the files.
    python3 demo/summary.py OUT RULES COLLECTIVE...      (the python collsel is installed in)
"""
import json
import os
import sys

from collsel.core.mpi.method_text import chosen_text, leaves_text as leaves, mpi_name, stats_counts

KINDS = ("launches", "leave_one_P_out", "leave_one_m_out")


def pct(x):
    return "-" if x is None else f"{x:.2f} %"


def label(stats, kind):
    """A kind of fold as build prints it ('leave-one-P-out'), not its key."""
    return (stats["out_of_sample"].get(kind) or {}).get("label", kind)


def block(out, collective):
    d = os.path.join(out, collective)
    with open(os.path.join(d, "tree", "stats.json"), encoding="utf-8") as f:
        stats = json.load(f)
    with open(os.path.join(d, "tree", "tree.json"), encoding="utf-8") as f:
        family = json.load(f).get("algorithm_family", "openmpi")
    mpi = mpi_name(family)
    methods = chosen_text(collective, stats_counts(stats["leaf_methods"]), family)
    head = ("out of sample", "this tree", f"{mpi}'s default", "best fixed method")
    rows = [head] + [(f["label"], pct(f["tree"]["mean"]), pct(f["default"]["mean"]),
                      pct(f["best_fixed"]["mean"]))
                     for f in (stats["out_of_sample"].get(k) for k in KINDS) if f]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = [f"{collective}: {leaves(stats['leaves'])}: {methods}"]
    lines += ["  " + "  ".join(v.ljust(w) if i == 0 else v.rjust(w)
                               for i, (v, w) in enumerate(zip(r, widths))) for r in rows]
    nested = stats["recommendation"].get("nested", {}).get("combined")
    if nested:
        lines += [f"  nested cross-validation (the choice of tree included): {pct(nested['mean'])} "
                  f"mean, {pct(nested['max'])} max ({', '.join(label(stats, k) for k in nested['kinds'])})"]
    lines += [f"  warning: {w}" for w in stats["warnings"]]
    lines += [f"  files: {os.path.join(d, 'tree.bin')} (C runtime, libcollsel), "
              f"{os.path.join(d, 'tree', 'decision.c')}, "
              f"report {os.path.join(d, 'report', 'index.html')}"]
    return "\n".join(lines)


def main(argv):
    out, rules, *collectives = argv[1:]
    print("\n".join(block(out, c) for c in collectives))
    print(f"Open MPI ({' and '.join(collectives)}): mpirun --mca coll_tuned_use_dynamic_rules 1 "
          f"--mca coll_tuned_dynamic_rules_filename {rules} ...")


if __name__ == "__main__":
    main(sys.argv)
