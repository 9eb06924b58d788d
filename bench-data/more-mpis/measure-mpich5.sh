#!/usr/bin/env bash
# The MPICH 5.0.2 tables again, with 5.0.2's own algorithms (collsel measures the running
# MPICH's names since 2026-11-26 07:05; measure.sh's first run had only 4.0.2's): bcast and
# allreduce, training (3 launches) and fresh (2 launches, seed 2), the grid of measure.sh.
#   flock /tmp/collsel-measure.lock bench-data/more-mpis/measure-mpich5.sh [OUTDIR]
# Appends every command with its load average and wall time to PROVENANCE.md.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(mkdir -p "${1:-$(dirname "$0")}" && cd "${1:-$(dirname "$0")}" && pwd)
PROV=$OUT/PROVENANCE.md
{
    echo
    echo "## measure-mpich5.sh: MPICH 5.0.2 with its own algorithms (replaces the *-mpich5*.csv above)"
    echo "- commit: $(git -C "$REPO" rev-parse HEAD)"
} >> "$PROV"
# shellcheck source=../provenance.sh
. "$REPO/bench-data/provenance.sh"
for c in bcast allreduce; do
    sweep=(collsel sweep --mpi mpich --mpi-home "$REPO/build/mpis/mpich5" --collective "$c"
           --comm-sizes 2,3,4 --msg-sizes 8,512,4K,32K,256K,1M --force)
    run "${sweep[@]}" --launches 3 --out "$OUT/$c-mpich5.csv"
    run "${sweep[@]}" --launches 2 --seed 2 --out "$OUT/$c-mpich5-fresh.csv"
done
echo "- end: $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$PROV"
