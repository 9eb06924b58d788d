#!/usr/bin/env bash
# make bench-overhead: what deciding costs a program, three ways side by side in one run (Open MPI
# 4.1, this machine, P = 2): plain Open MPI, libcollsel (LD_PRELOAD) and the coll/collsel
# component, launches alternated round by round so drift hits all three alike.
#   1. MPI_Bcast and MPI_Allreduce of 1 byte, ns per call (tests/integration/libcollsel_overhead.c,
#      its mpi_ns: the median over 9 rounds of 20,000 calls), with two sets of trees:
#        defer    trees that defer at 1 byte (speed/libcollsel/make_tree.py): the decision is
#                 looked up and the MPI's own algorithm runs: the cost of the lookup path alone;
#        tune-vm  the trees of bench-data/tune-vm/{bcast,allreduce}.csv: the decided algorithm
#                 runs (the default path of each mechanism: a forced coll/base function);
#   2. MPI_Comm_split + MPI_Comm_free x 1,000, alone and with a first bcast and reduce on each
#      communicator (speed/libcollsel/comm_split.c), tune-vm trees.
# Prints the median (and min) over ROUNDS rounds per cell and its ratio to plain.
# Usage: speed/overhead/bench.sh [BUILD_DIR]   (default build/overhead-bench; ROUNDS=5)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$REPO/build/overhead-bench}
ROUNDS=${ROUNDS:-5}
mkdir -p "$B/defer" "$B/tune-vm"
make -s -C "$REPO" libcollsel ompi-component >/dev/null
LIB=$REPO/build/libcollsel/openmpi/libcollsel.so
COMPONENTS=$REPO/build/ompi-component/components:/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3
FLAGS=(-O2 -std=c99 -Wall -Wextra -Werror)
mpicc.openmpi "${FLAGS[@]}" "$REPO/tests/integration/libcollsel_overhead.c" -o "$B/overhead"
mpicc.openmpi "${FLAGS[@]}" "$REPO/speed/libcollsel/comm_split.c" -o "$B/comm_split"
for c in bcast allreduce; do
    python3 "$REPO/speed/libcollsel/make_tree.py" defer "$c" "$B/defer/$c.json"
    collsel emit --target blob "$B/defer/$c.json" --out "$B/defer/$c.bin" >/dev/null
    collsel build "$REPO/bench-data/tune-vm/$c.csv" --collective "$c" --out "$B/build-$c" >/dev/null
    collsel emit --target blob "$B/build-$c/tree.json" --out "$B/tune-vm/$c.bin" >/dev/null
done
MPI=(timeout 300 mpirun.openmpi --allow-run-as-root --oversubscribe -np 2
     --mca mpi_yield_when_idle 1 --mca coll_tuned_use_dynamic_rules 1)
way() {   # way NAME TREES PROGRAM ARGS...: one launch, the program's output line
    local name=$1 trees=$2; shift 2
    case $name in
        plain) "${MPI[@]}" "$@" ;;
        libcollsel) "${MPI[@]}" -x LD_PRELOAD="$LIB" -x COLLSEL_TREES="$trees" "$@" ;;
        coll/collsel) "${MPI[@]}" --mca mca_base_component_path "$COMPONENTS" \
                          --mca coll_collsel_trees "$trees" "$@" ;;
    esac
}
RESULTS=$B/results.tsv
: > "$RESULTS"
echo "# $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg); $ROUNDS rounds" >&2
for r in $(seq "$ROUNDS"); do
    for c in bcast allreduce; do
        for trees in defer tune-vm; do
            for w in plain libcollsel coll/collsel; do
                [ "$w" = plain ] && [ "$trees" = tune-vm ] && continue   # plain has no trees
                line=$(way "$w" "$B/$trees" "$B/overhead" 1 20000 9 "$c")
                ns=$(sed -n 's/.* mpi_ns=\([0-9.]*\).*/\1/p' <<< "$line")
                printf '%s\t%s\t%s\t%s\n' "1-byte $c, ns per call" "$trees" "$w" "$ns" >> "$RESULTS"
            done
        done
    done
    for w in plain libcollsel coll/collsel; do
        line=$(way "$w" "$B/tune-vm" "$B/comm_split" 1000)
        printf '%s\t%s\t%s\t%s\n' "split+free, us per comm" tune-vm "$w" \
            "$(sed -n 's/.* split_free_us=\([0-9.]*\).*/\1/p' <<< "$line")" >> "$RESULTS"
        printf '%s\t%s\t%s\t%s\n' "split+bcast+reduce+free, us per comm" tune-vm "$w" \
            "$(sed -n 's/.* split_bcast_reduce_free_us=\([0-9.]*\).*/\1/p' <<< "$line")" >> "$RESULTS"
    done
    echo "round $r of $ROUNDS done, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
python3 "$REPO/speed/overhead/summary.py" "$RESULTS"
