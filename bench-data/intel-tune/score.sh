#!/bin/sh
# Issue 40, item 4: every tree of measure.sh's run scored with `collsel compare --tree` on the
# fresh per-method sweeps (<coll>-fresh.csv), beside Intel MPI's default and Intel's tuner
# (mpitune_fast's file, measured as algorithm 0 in <coll>-mpitune-fresh.csv):
#   - each `collsel tune --mpi intel` round's deployed tree (tune-K/<coll>/tree/tree.json);
#   - the reference: the recommended tree without defer (what intel-json deploys) of today's
#     per-method sweep of 3 launches (<coll>-per-method.csv), and of the 2026-11-26 one
#     (bench-data/more-mpis/<coll>-intel.csv, the peer table's "today's");
# then the tuning wall times of timings.tsv, each tune beside the mpitune_fast just before it.
# Reads only the files here; the reference trees go to a temporary directory, removed at the end.
# Usage: sh bench-data/intel-tune/score.sh [DIR]   (DIR: measure.sh's output, default this
# directory; collsel on PATH, or COLLSEL=/path/to/collsel)
set -eu
here=$(cd "${1:-$(dirname "$0")}" && pwd)
peers=$(cd "$(dirname "$0")/../more-mpis" && pwd)
collsel=${COLLSEL:-collsel}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# figures KEY: "mean / median / max %" of one selection in compare --tree's JSON (stdin)
figures() {
    python3 -c '
import json, sys
doc = json.load(sys.stdin)
key = sys.argv[1]
f = doc["peers"][key[5:]] if key.startswith("peer:") else doc[key]
print("%.1f / %.1f / %.1f %% (%d cells)" % (f["mean"], f["median"], f["max"], f["cells"]))' "$1"
}

score() {       # score TREE COLL: compare --tree's JSON of TREE on the fresh sweep
    "$collsel" compare --tree "$1" "$here/$2-fresh.csv" \
        --peer "mpitune=$here/$2-mpitune-fresh.csv" --format json
}

echo "| collective | selection | fresh-run penalty mean / median / max |"
echo "|---|---|---|"
for c in bcast allreduce; do
    for tree in "$here"/tune-*/"$c"/tree/tree.json; do
        round=$(basename "$(dirname "$(dirname "$(dirname "$tree")")")")
        echo "| $c | collsel tune --mpi intel ($round) | $(score "$tree" "$c" | figures tree) |"
    done
    for ref in "today:$here/$c-per-method.csv" "2026-11-26:$peers/$c-intel.csv"; do
        name=${ref%%:*} table=${ref#*:}
        "$collsel" build "$table" --collective "$c" --recommend --no-defer \
            --out "$work/$c-$name" > "$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
        echo "| $c | reference: recommended tree, no defer, of $name's per-method sweep (3 launches) | $(score "$work/$c-$name/tree.json" "$c" | figures tree) |"
    done
    score "$tree" "$c" > "$work/last.json"
    echo "| $c | Intel MPI's default | $(figures default < "$work/last.json") |"
    echo "| $c | Intel's tuner (mpitune_fast's file) | $(figures peer:mpitune < "$work/last.json") |"
done
echo
echo "tuning wall times (timings.tsv): each collsel tune beside the mpitune_fast run just before it"
awk -F'\t' 'NR > 1 && $1 == "mpitune_fast" { m = $2 }
            NR > 1 && $1 == "collsel tune" { printf "  mpitune_fast %.2f s, collsel tune %.2f s: ratio %.2f (target <= 2)\n", m, $2, $2 / m }' \
    "$here/timings.tsv"
