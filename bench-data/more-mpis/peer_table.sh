#!/bin/sh
# The peer table of issue 31 (docs/guide/more-mpis.md, "The peer table"): per MPI and
# collective, the tree collsel would deploy (and the exact tree), built from the training table
# beside this script, scored with `collsel compare --tree` on the fresh table (another seed), beside the MPI's
# default and, for Intel MPI, its own tuner (mpitune_fast's file, measured as algorithm 0 in
# <coll>-intel-autotuned-fresh.csv). Tuning wall times: the sweeps' and mpitune_fast's from
# PROVENANCE.md, plus the build time measured here. Then the noise floor: `collsel compare
# TRAIN FRESH`, how far two sweeps of one grid disagree.
#
# Reads only the tables here; trees go to a temporary directory, removed at the end.
# Usage: sh bench-data/more-mpis/peer_table.sh   (collsel on PATH, or COLLSEL=/path/to/collsel)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
collsel=${COLLSEL:-collsel}
mpich5_base=${MPICH5_BASE:-$here/../../build/mpich5/generic.json}
[ -f "$mpich5_base" ] || { echo "peer_table.sh: no MPICH 5 base at $mpich5_base: run make mpich5-base (or set MPICH5_BASE)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tuned_p=4     # the one P mpitune_fast tuned at (-n 1 -ppn 4)

# wall TEXT: the wall time (s) PROVENANCE.md records for the command containing TEXT (the
# last such command: measure-mpich5.sh's sweeps replaced measure.sh's MPICH 5 tables)
wall() {
    grep -F -- "$1" "$here/PROVENANCE.md" | sed -n 's/.*wall \([0-9.]*\) s.*/\1/p' | tail -n 1
}

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
add() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a + b }'; }

# figures KEY: "mean / median / max % | cells" of one selection in compare --tree's JSON (stdin)
figures() {
    python3 -c '
import json, sys
doc = json.load(sys.stdin)
key = sys.argv[1]
f = doc["peers"][key[5:]] if key.startswith("peer:") else doc[key]
print("no cell scored | 0" if f["mean"] is None else
      "%.1f / %.1f / %.1f %% | %d" % (f["mean"], f["median"], f["max"], f["cells"]))' "$1"
}

# build OUT TABLE COLL [build flags]: a tree (--recommend: the recommended one); prints the
# seconds it took
build() {
    out=$1 table=$2 coll=$3
    shift 3
    t0=$(now)
    "$collsel" build "$table" --collective "$coll" "$@" --out "$out" \
        >"$out.log" 2>&1 || { cat "$out.log" >&2; exit 1; }
    since "$t0"
}

# deploys TREE TARGET: empty when `collsel emit` takes the tree, else its one-line refusal
deploys() {
    # shellcheck disable=SC2086
    "$collsel" emit "$1" --target "$2" $base --out "$work/emitted" >/dev/null 2>"$work/emit.err" \
        && return 0
    sed 's/^collsel: error: [^:]*: //' "$work/emit.err"
}

# how TREE: the target that deploys a tree of the current MPI ($target, or for Intel MPI
# intel-json, which takes trees of P x m), or "not deployable: ..."
how() {
    [ -z "$(deploys "$1" "$target")" ] && { echo "$target"; return; }
    if [ "$mpi" = intel ]; then
        json_refused=$(deploys "$1" intel-json)
        [ -z "$json_refused" ] && { echo "intel-json"; return; }
        echo "not deployable: $target refuses it¹, intel-json too: ${json_refused%%;*}"
        return
    fi
    echo "not deployable: $target refuses it¹"
}

# rows MPI COLL: the table rows of one MPI and collective
rows() {
    mpi=$1 coll=$2
    train="$here/$coll-$mpi.csv" fresh="$here/$coll-$mpi-fresh.csv"
    sweep=$(wall "/$coll-$mpi.csv\`")
    dir="$work/$mpi-$coll"
    secs=$(build "$dir" "$train" "$coll" --recommend)
    exact_secs=$(build "$dir-exact" "$train" "$coll")
    base=
    case $mpi in
        openmpi5) target=ompi-rules name="Open MPI 5.0.11" ;;
        mpich5) target=mpich-json name="MPICH 5.0.2"
                # 5.0.2's selection: its trees may name algorithms 4.0.2 lacks
                base="--mpich-base $mpich5_base" ;;
        intel) target=intel-env name="Intel MPI 2021.18.1" ;;
    esac
    refused=$(deploys "$dir/tree.json" "$target")
    peers=
    [ "$mpi" = intel ] && peers="--peer mpitune=$here/$coll-intel-autotuned-fresh.csv"
    # shellcheck disable=SC2086
    "$collsel" compare --tree "$dir/tree.json" "$fresh" $peers --format json >"$work/rec.json"
    if [ -z "$refused" ]; then
        echo "| $name | $coll | collsel, recommended tree ($target) | $(add "$sweep" "$secs") s ($sweep + $secs) | $(figures tree <"$work/rec.json") |"
        json="$work/rec.json"
    else
        # the tree intel-env takes: the recommended tree of the training rows at one P (a
        # choice by message size alone), written as message ranges for every P
        p4="$work/p$tuned_p-$mpi-$coll"
        mkdir -p "$p4"
        for f in "$coll-$mpi.csv" "$coll-$mpi.csv.launches"; do
            awk -F, -v p="$tuned_p" '/^#/ || $1 == "collective" || $2 == p' "$here/$f" >"$p4/$f"
        done
        secs_p4=$(build "$p4/tree" "$p4/$coll-$mpi.csv" "$coll" --recommend)
        still=$(deploys "$p4/tree/tree.json" "$target")
        [ -z "$still" ] || { echo "$coll: $target refuses the P=$tuned_p tree too: $still" >&2; exit 1; }
        # shellcheck disable=SC2086
        "$collsel" compare --tree "$p4/tree/tree.json" "$fresh" $peers --format json >"$work/p4.json"
        echo "| $name | $coll | collsel, P=$tuned_p tree on m ($target) | $(add "$sweep" "$secs_p4") s ($sweep + $secs_p4) | $(figures tree <"$work/p4.json") |"
        echo "| $name | $coll | collsel, recommended P x m tree ($(how "$dir/tree.json")) | $(add "$sweep" "$secs") s ($sweep + $secs) | $(figures tree <"$work/rec.json") |"
        json="$work/p4.json"
    fi
    "$collsel" compare --tree "$dir-exact/tree.json" "$fresh" --format json >"$work/exact.json"
    echo "| $name | $coll | collsel, exact tree ($(how "$dir-exact/tree.json")) | $(add "$sweep" "$exact_secs") s ($sweep + $exact_secs) | $(figures tree <"$work/exact.json") |"
    echo "| $name | $coll | $name's default | 0 s | $(figures default <"$json") |"
    if [ "$mpi" = intel ]; then
        echo "| $name | $coll | Intel's tuner (mpitune_fast, its file) | $(wall mpitune_fast) s (bcast and allreduce together, P=$tuned_p) | $(figures peer:mpitune <"$json") |"
    fi
}

echo "| MPI | collective | selection | tuning wall time | fresh-run penalty mean / median / max | cells |"
echo "|---|---|---|---|---|---|"
for mpi in openmpi5 mpich5 intel; do
    for coll in bcast allreduce; do
        rows "$mpi" "$coll"
    done
done
echo
echo "¹ Intel MPI keeps one preset per communicator-size range and drops the message ranges"
echo "under it (docs/guide/intel-mpi.md), so intel-env takes trees on one axis only; Intel's"
echo "JSON tuning file (intel-json) takes trees of P x m, but not one that defers in some cells."
echo "Open MPI 5's han is no row: on one node coll/han disqualifies itself (docs/guide/more-mpis.md),"
echo "so tuned's decision (the default row) is what runs."
echo
echo "Noise floor: the training table's exact map (its fastest method per cell) on the fresh"
echo "sweep, and the fresh one's on the training sweep (\`collsel compare TRAIN FRESH\`):"
echo
echo "| MPI | collective | training's best on fresh: mean / median / max | fresh's best on training: mean / median / max |"
echo "|---|---|---|---|"
for mpi in openmpi5 mpich5 intel; do
    for coll in bcast allreduce; do
        "$collsel" compare "$here/$coll-$mpi.csv" "$here/$coll-$mpi-fresh.csv" --format json |
            python3 -c '
import json, sys
doc = json.load(sys.stdin)
text = lambda f: "%.1f / %.1f / %.1f %%" % (f["mean"], f["median"], f["max"])
print("| %s | %s | %s | %s |" % (sys.argv[1], sys.argv[2], text(doc["A->B"]["tree"]),
                                  text(doc["B->A"]["tree"])))' "$mpi" "$coll"
    done
done
