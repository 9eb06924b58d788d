#!/usr/bin/env bash
# make bench-libcollsel: the cost of libcollsel (Open MPI 4.1, this machine, P = 2), printed:
#   1. MPI_Bcast of 1 byte through the library and PMPI_Bcast on the same communicator, side by
#      side in one launch (tests/integration/libcollsel_overhead.c); the tree defers there, so
#      both run the same algorithm and the ratio is the interposition itself; then the same
#      program without the library (the ratio's noise floor);
#   2. the per-call lookup alone (lookup.c: the rule list's binary search, no MPI) on the
#      shipped paired bcast tree, against collsel_tree_decide;
#   3. the memory per communicator (comm_memory.c: heap state and shadow communicators);
#   4. MPI_Allreduce of 1 byte through the library and PMPI_Allreduce on the same communicator
#      in one launch, with the tree of bench-data/tune-vm/allreduce.csv (at P = 2 and 1 byte it
#      forces recursive_doubling on its shadow communicator, which Open MPI's own decision also
#      runs there: the difference is the library's cost), and without the library;
#   5. making communicators: MPI_Comm_split x 1,000 (comm_split.c), alone and with a first
#      1-int bcast and reduce on each, with the paired bcast + reduce trees and without the
#      library.
# Usage: speed/libcollsel/bench.sh [BUILD_DIR]   (default build/libcollsel-bench)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$REPO/build/libcollsel-bench}
HERE=$REPO/speed/libcollsel
mkdir -p "$B/defer" "$B/paired" "$B/tune-vm"
make -s -C "$REPO" libcollsel
LIB=$REPO/build/libcollsel/openmpi/libcollsel.so
FLAGS=(-O2 -std=c99 -Wall -Wextra -Werror)
mpicc.openmpi "${FLAGS[@]}" "$REPO/tests/integration/libcollsel_overhead.c" -o "$B/overhead"
mpicc.openmpi "${FLAGS[@]}" -I"$REPO/include" "$HERE/comm_memory.c" -o "$B/comm_memory" -ldl
mpicc.openmpi "${FLAGS[@]}" "$HERE/comm_split.c" -o "$B/comm_split"
gcc "${FLAGS[@]}" -I"$REPO/include" -I"$REPO/runtime" -I"$REPO/runtime/libcollsel" "$HERE/lookup.c" \
    "$REPO/runtime/libcollsel/rules.c" "$REPO/runtime/collsel_tree.c" -o "$B/lookup"
python3 "$HERE/make_tree.py" defer bcast "$B/defer/bcast.json"
collsel emit --target blob "$B/defer/bcast.json" --out "$B/defer/bcast.bin" >/dev/null 2>&1
for c in bcast reduce; do
    collsel build "$REPO/bench-data/paired/$c-openmpi.csv" --collective "$c" --out "$B/build-$c" >/dev/null
    collsel emit --target blob "$B/build-$c/tree.json" --out "$B/paired/$c.bin" >/dev/null 2>&1
done
collsel build "$REPO/bench-data/tune-vm/allreduce.csv" --collective allreduce --out "$B/build-allreduce" >/dev/null
collsel emit --target blob "$B/build-allreduce/tree.json" --out "$B/tune-vm/allreduce.bin" >/dev/null 2>&1
MPI=(timeout 300 mpirun.openmpi --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1
     --mca coll_tuned_use_dynamic_rules 1)
echo "# 1. MPI_Bcast, 1 byte, P=2: through libcollsel (mpi_ns) vs PMPI_Bcast (pmpi_ns), one launch"
echo "with library:    $("${MPI[@]}" -np 2 -x LD_PRELOAD="$LIB" -x COLLSEL_TREES="$B/defer" "$B/overhead" 1)"
echo "without library: $("${MPI[@]}" -np 2 "$B/overhead" 1)"
echo "# 2. lookup alone (exact paired bcast tree, P=4)"
"$B/lookup" "$B/paired/bcast.bin" 4
echo "# 3. memory per communicator (paired bcast + reduce trees, P=2 and P=4)"
for p in 2 4; do
    echo "P=$p: $("${MPI[@]}" -np $p -x LD_PRELOAD="$LIB" -x COLLSEL_TREES="$B/paired" "$B/comm_memory" 200)"
done
echo "# 4. MPI_Allreduce, 1 byte, P=2: through libcollsel (mpi_ns, tune-vm tree: $(printf '2 1\n' | collsel query "$B/build-allreduce/tree.json" --points - | head -1)) vs PMPI_Allreduce (pmpi_ns), one launch"
echo "with library:    $("${MPI[@]}" -np 2 -x LD_PRELOAD="$LIB" -x COLLSEL_TREES="$B/tune-vm" "$B/overhead" 1 20000 9 allreduce)"
echo "without library: $("${MPI[@]}" -np 2 "$B/overhead" 1 20000 9 allreduce)"
echo "# 5. MPI_Comm_split x 1000, P=2, per communicator (paired bcast + reduce trees)"
echo "with library:    $("${MPI[@]}" -np 2 -x LD_PRELOAD="$LIB" -x COLLSEL_TREES="$B/paired" "$B/comm_split" 1000)"
echo "without library: $("${MPI[@]}" -np 2 "$B/comm_split" 1000)"
