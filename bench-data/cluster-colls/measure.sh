#!/usr/bin/env bash
# Issue 28 on the emulated cluster (4 nodes x ppn 1, 2 at 1gbit): paired sweeps of allreduce,
# allgather, alltoall and reduce_scatter_block, then `collsel tune` of every collective inside
# a Slurm allocation (salloc, launcher srun).
#   flock /tmp/collsel-measure.lock bench-data/cluster-colls/measure.sh [OUTDIR]
#   SMALL=1 bench-data/cluster-colls/measure.sh /tmp/x      a 3-minute reduced run
# PROVENANCE.md records the commit, every command, the load average at each start and the wall time.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(mkdir -p "${1:-$(dirname "$0")}" && cd "${1:-$(dirname "$0")}" && pwd)
SMALL=${SMALL:-0}
CLUSTER_DIR=${COLLSEL_CLUSTER_DIR:-/var/lib/collsel/cluster}
if [ "$SMALL" = 1 ]; then
    COLLS=(allreduce); SIZES=16,64K; LAUNCHES=2; BUDGET=2m; TUNE_COLLS=allreduce,barrier
else
    COLLS=(allreduce allgather alltoall reduce_scatter_block)
    SIZES=1,4,16,64,256,1K,4K,16K,64K,256K,1M; LAUNCHES=5; BUDGET=20m; TUNE_COLLS=all
fi
cleanup() { collsel cluster down >/dev/null 2>&1 || true; }
trap cleanup EXIT INT TERM

PROV=$OUT/PROVENANCE.md
{
    echo "# Provenance: bench-data/cluster-colls/measure.sh"
    echo "- commit: $(git -C "$REPO" rev-parse HEAD)"
    echo "- host: $(hostname), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
    echo "- SMALL=$SMALL; cluster 4 nodes at 1gbit; sizes $SIZES; $LAUNCHES launches; tune budget $BUDGET"
    echo; echo "Commands (load average and wall time of each):"
} > "$PROV"
# shellcheck source=../provenance.sh
. "$REPO/bench-data/provenance.sh"
run collsel cluster up --nodes 4 --rate 1gbit
for c in "${COLLS[@]}"; do
    run collsel sweep --collective "$c" --cluster --nodes 1,2,4 --ppn 1,2 --msg-sizes "$SIZES" \
        --launches "$LAUNCHES" --force --out "$OUT/$c-nodes-ppn.csv"
done
# shellcheck disable=SC1091
. "$CLUSTER_DIR/env"
rm -rf "$OUT/tune-salloc"
run salloc -N 4 --ntasks-per-node 2 -p collsel \
    collsel tune --launcher srun --cluster "$CLUSTER_DIR" --nodes 1,2,4 --ppn 1,2 \
    --collectives "$TUNE_COLLS" --budget "$BUDGET" --out "$OUT/tune-salloc"
echo "- end: $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$PROV"
