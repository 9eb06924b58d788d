"""The table of speed/overhead/bench.sh: per (what, trees), the median and min over rounds of
plain Open MPI, libcollsel and coll/collsel, and each one's median over plain's.
Usage: python3 summary.py RESULTS.tsv   (lines: what <TAB> trees <TAB> way <TAB> value)"""
import csv
import statistics
import sys

WAYS = ("plain", "libcollsel", "coll/collsel")


def main(path):
    values = {}
    with open(path, newline="") as f:
        for what, trees, way, value in csv.reader(f, delimiter="\t"):
            values.setdefault((what, trees), {}).setdefault(way, []).append(float(value))
    plain = {what: statistics.median(v["plain"])
             for (what, _), v in values.items() if "plain" in v}
    print(f"{'what':<38} {'trees':<8} " + " ".join(f"{w:>26}" for w in WAYS))
    for (what, trees), ways in values.items():
        cells = []
        for w in WAYS:
            if w not in ways:
                cells.append(f"{'(see defer row)':>26}")
                continue
            med = statistics.median(ways[w])
            cells.append(f"{med:>9.1f} (min {min(ways[w]):>8.1f}) x{med / plain[what]:4.2f}")
        print(f"{what:<38} {trees:<8} " + " ".join(cells))


if __name__ == "__main__":
    main(sys.argv[1])
