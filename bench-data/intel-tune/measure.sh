#!/usr/bin/env bash
# Issue 40, item 4 (Intel MPI's tuning time), on this machine, idle:
#   1. Intel's tuner `mpitune_fast` (bcast and allreduce, 4 ranks) and `collsel tune --mpi intel`
#      (bcast and allreduce, P = 2, 3, 4, m = 8 B - 1 MiB, --mode by-size), alternated ROUNDS
#      times, each timed to the millisecond (timings.tsv);
#   2. fresh per-method sweeps (one launch per preset, 2 launches, another seed) of the same
#      grid, the judge of every tree; and of Intel's selection under mpitune_fast's file
#      (I_MPI_TUNING_BIN, algorithm 0 only);
#   3. the reference: per-method sweeps of 3 launches, the way the peer table of 2026-11-26
#      tuned (its fresh-run penalties 45.7 % and 15.2 % mean are the issue's "today's").
#   flock /tmp/collsel-measure.lock bench-data/intel-tune/measure.sh [OUTDIR]
# score.sh scores every tree on the fresh sweeps. PROVENANCE.md records the commit, every
# command, the load average at its start and its wall time.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(mkdir -p "${1:-$(dirname "$0")}" && cd "${1:-$(dirname "$0")}" && pwd)
INTEL=$REPO/build/mpis/intel
GRID=(--comm-sizes 2,3,4 --msg-sizes 8,512,4K,32K,256K,1M)
ROUNDS=${ROUNDS:-3}
PROV=$OUT/PROVENANCE.md
{
    echo "# Provenance: bench-data/intel-tune/measure.sh"
    echo "- commit: $(git -C "$REPO" rev-parse HEAD)"
    echo "- host: $(hostname), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
    echo "- Intel MPI: $(cat "$INTEL"/.pins)"
    echo; echo "Commands (load average and wall time of each):"
} > "$PROV"
# shellcheck source=../provenance.sh
. "$REPO/bench-data/provenance.sh"
timed() {       # timed NAME CMD...: CMD run and its wall time in ms appended to timings.tsv
    local name=$1 t0 load; shift
    load=$(cut -d' ' -f1-3 /proc/loadavg); t0=$(date +%s%N)
    "$@"
    printf '%s\t%.3f\t%s\n' "$name" "$(( $(date +%s%N) - t0 ))e-9" "$load" >> "$OUT/timings.tsv"
}
printf 'what\twall_s\tload_at_start\n' > "$OUT/timings.tsv"
intel_env=(env I_MPI_ROOT="$INTEL" LD_LIBRARY_PATH="$INTEL/lib" FI_PROVIDER_PATH="$INTEL/lib"
           I_MPI_FABRICS=shm PATH="$INTEL/bin:$PATH")
for r in $(seq 1 "$ROUNDS"); do
    # Intel's tuner writes into its working directory (tuning_results/, hostfiles/)
    rm -rf "$OUT/mpitune-$r" "$OUT/tune-$r"; mkdir -p "$OUT/mpitune-$r"
    (cd "$OUT/mpitune-$r" && timed mpitune_fast run "${intel_env[@]}" mpitune_fast -hosts localhost \
        -n 1 -ppn 4 -c bcast,allreduce > mpitune_fast.out 2>&1)
    timed "collsel tune" run collsel tune --mpi intel --mpi-home "$INTEL" --collectives bcast,allreduce \
        "${GRID[@]}" --time-cap 0.01 --out "$OUT/tune-$r" 2> "$OUT/tune-$r.log"
done
TUNED=$(ls "$OUT"/mpitune-1/tuning_results/cluster_merged_*.dat | tail -1)
for c in bcast allreduce; do
    sweep=(collsel sweep --mpi intel --mpi-home "$INTEL" --collective "$c" "${GRID[@]}" --force)
    run "${sweep[@]}" --mode per-method --launches 2 --seed 2 --out "$OUT/$c-fresh.csv"
    I_MPI_TUNING_BIN=$TUNED run "${sweep[@]}" --algorithms 0 --launches 2 --seed 2 \
        --out "$OUT/$c-mpitune-fresh.csv"
    run "${sweep[@]}" --mode per-method --launches 3 --out "$OUT/$c-per-method.csv"
done
echo "- end: $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$PROV"
