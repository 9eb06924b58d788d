#!/usr/bin/env bash
# Issue 31 (and the MPICH half of 29, the overhead table of 32), on this machine, idle:
#   1. paired sweeps of bcast and allreduce under Open MPI 5.0.11 and MPICH 5.0.2, per-method
#      sweeps (one launch per preset) under Intel MPI 2021.18.1: a training table (3 launches)
#      and, separately, a fresh one (2 launches, another seed) per (MPI, collective), P = 2, 3,
#      4, m = 8 B - 1 MiB; MPICH 5.0.2's allreduce without reduce_scatter_allgather (it
#      segfaults there, docs/guide/more-mpis.md);
#   2. Intel's own tuner, mpitune_fast, for bcast and allreduce, timed, and a fresh sweep of
#      Intel's selection under the file it writes (I_MPI_TUNING_BIN, algorithm 0 only);
#   3. `collsel tune` of every collective under Debian's MPICH 4.0 (P = 2, 3, 4), the trees
#      libcollsel under MPICH decides with (tests/integration/test_libcollsel_all.py);
#   4. `make bench-overhead` (plain / libcollsel / coll/collsel side by side).
#   flock /tmp/collsel-measure.lock bench-data/more-mpis/measure.sh [OUTDIR]
# PROVENANCE.md records the commit, every command, the load average at its start and its wall time.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(mkdir -p "${1:-$(dirname "$0")}" && cd "${1:-$(dirname "$0")}" && pwd)
MPIS=$REPO/build/mpis
GRID=(--comm-sizes 2,3,4 --msg-sizes 8,512,4K,32K,256K,1M)
PROV=$OUT/PROVENANCE.md
{
    echo "# Provenance: bench-data/more-mpis/measure.sh"
    echo "- commit: $(git -C "$REPO" rev-parse HEAD)"
    echo "- host: $(hostname), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
    echo "- MPIs: $(cat "$MPIS"/openmpi5/.pins) / $(cat "$MPIS"/mpich5/.pins) / $(cat "$MPIS"/intel/.pins); Debian's MPICH $(mpichversion | sed -n 's/MPICH Version: *//p')"
    echo; echo "Commands (load average and wall time of each):"
} > "$PROV"
# shellcheck source=../provenance.sh
. "$REPO/bench-data/provenance.sh"
declare -A HOME_OF=([openmpi5]=openmpi [mpich5]=mpich [intel]=intel)
for home in openmpi5 mpich5 intel; do
    for c in bcast allreduce; do
        algs=()
        [ "$home/$c" = mpich5/allreduce ] && algs=(--algorithms nb,recursive_doubling)
        # Intel MPI per method, as measured then (its sweeps' default is --mode by-size since)
        [ "$home" = intel ] && algs=(--mode per-method)
        sweep=(collsel sweep --mpi "${HOME_OF[$home]}" --mpi-home "$MPIS/$home" --collective "$c"
               "${GRID[@]}" "${algs[@]}" --force)
        run "${sweep[@]}" --launches 3 --out "$OUT/$c-$home.csv"
        run "${sweep[@]}" --launches 2 --seed 2 --out "$OUT/$c-$home-fresh.csv"
    done
done
# Intel's tuner writes into its working directory (tuning_results/, hostfiles/)
mkdir -p "$OUT/intel-mpitune"
(
    cd "$OUT/intel-mpitune"
    export I_MPI_ROOT=$MPIS/intel LD_LIBRARY_PATH=$MPIS/intel/lib FI_PROVIDER_PATH=$MPIS/intel/lib \
        I_MPI_FABRICS=shm PATH=$MPIS/intel/bin:$PATH
    run mpitune_fast -hosts localhost -n 1 -ppn 4 -c bcast,allreduce > mpitune_fast.out 2>&1
)
TUNED=$(ls "$OUT"/intel-mpitune/tuning_results/cluster_merged_*.dat | tail -1)
for c in bcast allreduce; do
    I_MPI_TUNING_BIN=$TUNED run collsel sweep --mpi intel --mpi-home "$MPIS/intel" --collective "$c" \
        "${GRID[@]}" --algorithms 0 --launches 2 --seed 2 --force --out "$OUT/$c-intel-autotuned-fresh.csv"
done
rm -rf "$OUT/tune-mpich"
run collsel tune --mpi mpich --collectives all --budget 6m --comm-sizes 2,3,4 --out "$OUT/tune-mpich"
run make -s -C "$REPO" bench-overhead > "$OUT/overhead.txt" 2>&1
echo "- end: $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$PROV"
