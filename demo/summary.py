"""The end of `make demo`: one short block per collective from what `collsel build --recommend`
wrote (tree.json, stats.json): the recommended methods by name, the out-of-sample penalties of
the tree, of the MPI's default and of the best fixed method, the warnings, the files.
    python3 demo/summary.py OUT RULES COLLECTIVE...      (standard library only)
"""
import json
import os
import sys

MPI = {"openmpi": "Open MPI", "mpich": "MPICH"}


def leaves(n):
    return f"{n} lea{'f' if n == 1 else 'ves'}"


def block(out, collective):
    d = os.path.join(out, collective)
    with open(os.path.join(d, "tree", "stats.json"), encoding="utf-8") as f:
        stats = json.load(f)
    with open(os.path.join(d, "tree", "tree.json"), encoding="utf-8") as f:
        mpi = MPI.get(json.load(f).get("algorithm_family", "openmpi"), "the MPI")
    rec = stats["recommendation"]
    oos = stats["out_of_sample"][rec["kind"]]
    used = sorted(stats["leaf_methods"], key=lambda m: -m["leaves"])
    methods = (f"{used[0]['name']} everywhere" if len(used) == 1 else "; ".join(
        f"{m['name']} ({leaves(m['leaves'])})" for m in used))
    default = oos["default"]["mean"]
    lines = [f"{collective}: {leaves(stats['leaves'])}: {methods}",
             f"  out of sample ({oos['label']}, {oos['tree']['cells']} cells): this tree "
             f"{oos['tree']['mean']:.2f} %, "
             + ("" if default is None else f"{mpi}'s default {default:.2f} %, ")
             + f"best fixed method {oos['best_fixed']['mean']:.2f} %"]
    lines += [f"  warning: {w}" for w in stats["warnings"]]
    lines += [f"  files: {os.path.join(d, 'tree.bin')} (C runtime, libcollsel), "
              f"{os.path.join(d, 'tree', 'decision.c')}, "
              f"report {os.path.join(d, 'report', 'index.html')}"]
    return "\n".join(lines)


def main(argv):
    out, rules, *collectives = argv[1:]
    print("\n".join(block(out, c) for c in collectives))
    print(f"Open MPI: mpirun --mca coll_tuned_use_dynamic_rules 1 "
          f"--mca coll_tuned_dynamic_rules_filename {rules} ... ({' and '.join(collectives)})")


if __name__ == "__main__":
    main(sys.argv)
