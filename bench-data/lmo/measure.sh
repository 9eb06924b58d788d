#!/usr/bin/env bash
# The heterogeneous LMO model (issue 20) on the emulated cluster, where the truth is configured:
#   bench-data/lmo/measure.sh [OUTDIR]      (default: this directory; make measure-lmo)
#   SMALL=1 bench-data/lmo/measure.sh /tmp/x   a 1-3 minute reduced run
# Cluster: 4 nodes, tbf n1 400, n2 200, n3 100, n4 50 mbit each way; CPU shares n1 0.5, n2 1.0,
# n3 0.3, n4 0.7 (not in the order of the rates, so the rank correlations can tell which of the
# two a delay follows). A message i -> j leaves through node i's shaped egress and enters
# through node j's shaped ingress: the configured rate of link i-j is min(rate_i, rate_j).
# Steps:
#   1. collsel model lmo-fit --cluster --schedule serial --compare-schedules: the scan, then the
#      round-trips and one-to-two experiments at the same confidence target with both
#      schedules (the parameters from the serial ones; lmo-parallel.json refits the parallel
#      ones from the same file, nothing measured again);
#   2. collsel model lmo-mapping --measure: predicted best and worst binomial scatter mapping,
#      then binomial scatter under best, worst and identity and the linear scatter and gather,
#      measured over a range of sizes;
#   3. collsel model lmo-check: estimates vs the configuration (per link, mean, max; Spearman
#      of C_i, t_i vs 1/share and 1/rate), estimation cost per schedule, and the three models'
#      prediction errors on the step-2 measurements;
#   4. bcast: collsel model predict (lmo, hockney-hetero, hockney) -> collsel build, against a
#      paired collsel sweep on the same cluster (P = 2, 3, 4, one rank per node), scored by
#      collsel compare (the predicted table's exact map used on the measured table);
#   5. estimation cost on 6 nodes (4 processors have no two disjoint triplets, so only the
#      round-trips run in parallel there): lmo-fit --compare-schedules, no scan.
# FIGURES.md: the output of lmo-check, lmo-mapping, compare (computed, never typed in);
# PROVENANCE.md: commands, load average, commit.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(mkdir -p "${1:-$(dirname "$0")}" && cd "${1:-$(dirname "$0")}" && pwd)
SMALL=${SMALL:-0}
RATES=n1=400mbit,n2=200mbit,n3=100mbit,n4=50mbit
SHARES=n1=0.5,n2=1.0,n3=0.3,n4=0.7
RATES6=$RATES,n5=200mbit,n6=100mbit      # step 5: 6 nodes, so two triplets can run at once
SHARES6=$SHARES,n5=0.5,n6=1.0
cluster_up=0
cleanup() { if [ "$cluster_up" = 1 ]; then collsel cluster down >/dev/null 2>&1 || true; fi; }
trap cleanup EXIT INT TERM

# Sizes well above tbf's 256 KiB bucket (cluster/config.py TBF_BURST): a message that
# fits in a bucket refilled while its link idles passes unshaped, so below it the links are not
# at their configured rates (the parallel schedule and the binomial trees idle links most).
if [ "$SMALL" = 1 ]; then
    FIT=(--msg-sizes 1M --scan-sizes 128K,256K,512K,768K,1M,1536K --max-reps 5 --time-cap 0.3)
    MAP_SIZES=512K,1M; BCAST_SIZES=16K,256K; LAUNCHES=2; BCAST_ALGS=1,2,6
    FIT6=(--msg-sizes 512K --scan-sizes none --max-reps 5 --time-cap 0.3)
else
    FIT=(--msg-sizes 512K,2M --scan-sizes 64K,128K,256K,512K,768K,1M,1536K,2M --max-reps 10
         --time-cap 1)
    MAP_SIZES=256K,512K,1M,2M; BCAST_SIZES=16K,128K,512K; LAUNCHES=5; BCAST_ALGS=1,2,3,5,6,7
    FIT6=(--msg-sizes 512K --scan-sizes none --max-reps 10 --time-cap 1)
fi

log() { echo "[measure-lmo $(date +%H:%M:%S)] $*"; }
PROV=$OUT/PROVENANCE.md
{
    echo "# Provenance: bench-data/lmo/measure.sh"
    echo "- commit: $(git -C "$REPO" rev-parse HEAD)"
    echo "- start: $(date -u +%FT%TZ), uptime: $(uptime)"
    echo "- SMALL=$SMALL; cluster 4 nodes, rates $RATES, cpu shares $SHARES"
    echo; echo "Commands:"
} > "$PROV"
run() { echo "- \`$*\`" >> "$PROV"; "$@"; }

log "emulated cluster: 4 nodes, $RATES, $SHARES"
collsel cluster down >/dev/null 2>&1 || true
cluster_up=1
run collsel cluster up --nodes 4 --rates "$RATES" --cpu-shares "$SHARES"

log "1. lmo-fit: scan, then round-trips and one-to-two, serial and parallel"
rm -f "$OUT/fit-experiments.csv"
run timeout 400 collsel model lmo-fit --cluster --schedule serial --compare-schedules \
    "${FIT[@]}" --experiments "$OUT/fit-experiments.csv" --out "$OUT/lmo.json" \
    > "$OUT/lmo-fit.txt"
run collsel model lmo-fit --experiments "$OUT/fit-experiments.csv" --schedule parallel \
    --out "$OUT/lmo-parallel.json" > /dev/null

log "2. binomial scatter under the predicted best, worst and identity mappings; linear scatter/gather"
rm -f "$OUT/scatter-gather.csv"
run timeout 300 collsel model lmo-mapping "$OUT/lmo.json" --msg-size 1M --measure --cluster \
    --measure-sizes "$MAP_SIZES" --experiments "$OUT/scatter-gather.csv" --time-cap 0.3 \
    > "$OUT/lmo-mapping.txt"

log "4. bcast: paired sweep on the cluster (P = 2, 3, 4 at one rank per node)"
run timeout 540 collsel sweep --collective bcast --cluster --nodes 2,3,4 --ppn 1 \
    --algorithms "$BCAST_ALGS" --msg-sizes "$BCAST_SIZES" --launches "$LAUNCHES" \
    --out "$OUT/bcast-sweep.csv" --force 2> "$OUT/bcast-sweep.log"
collsel cluster down >/dev/null

log "5. estimation cost on 6 nodes: $RATES6, $SHARES6"
run collsel cluster up --nodes 6 --rates "$RATES6" --cpu-shares "$SHARES6" >/dev/null
rm -f "$OUT/fit6-experiments.csv"
run timeout 300 collsel model lmo-fit --cluster --schedule serial --compare-schedules \
    "${FIT6[@]}" --experiments "$OUT/fit6-experiments.csv" --out "$OUT/lmo6.json" \
    > /dev/null
collsel cluster down >/dev/null; cluster_up=0
log "cluster down; the rest is computed from the files"

for model in lmo hockney-hetero hockney; do
    run collsel model predict "$OUT/lmo.json" --collective bcast --model "$model" \
        --comm-sizes 2-4 --msg-sizes "$BCAST_SIZES" --out "$OUT/bcast-predicted-$model.csv"
done
run collsel build "$OUT/bcast-predicted-lmo.csv" --collective bcast --out "$OUT/bcast-tree-lmo" \
    > /dev/null

{
    echo "# Figures: the LMO model on the emulated cluster (bench-data/lmo/measure.sh)"
    echo
    echo "Cluster: 4 nodes, rates $RATES, cpu shares $SHARES (SMALL=$SMALL)."
    echo "Configured rate of link i-j = min(rate_i, rate_j) (tbf on each node's egress and ingress)."
    echo
    echo "## Estimates against the configuration, estimation cost, prediction accuracy"
    echo "(parameters from the serial schedule; \`collsel model lmo-check lmo.json --measured scatter-gather.csv\`)"
    echo '```'
    collsel model lmo-check "$OUT/lmo.json" --measured "$OUT/scatter-gather.csv" \
        --sweep "$OUT/bcast-sweep.csv" --json "$OUT/lmo-check.json"
    echo '```'
    echo
    echo "The same from the parallel schedule's experiments (\`lmo-check lmo-parallel.json\`):"
    echo '```'
    collsel model lmo-check "$OUT/lmo-parallel.json" --measured "$OUT/scatter-gather.csv" \
        --json "$OUT/lmo-check-parallel.json"
    echo '```'
    echo
    echo "## Estimation cost, parallel vs serial, on 6 nodes (\`lmo-check lmo6.json\`)"
    echo '```'
    collsel model lmo-check "$OUT/lmo6.json" --json "$OUT/lmo-check6.json"
    echo '```'
    echo
    echo "## The fit (\`collsel model lmo-fit\` stdout) and the mapping advice"
    echo '```'
    cat "$OUT/lmo-fit.txt" "$OUT/lmo-mapping.txt"
    echo '```'
    echo
    echo "## bcast: maps predicted from the fitted parameters scored on the measured sweep"
    echo "(\`collsel compare --collective bcast PREDICTED bcast-sweep.csv\`: A's exact map used on B)"
    for model in lmo hockney-hetero hockney; do
        echo
        echo "### $model"
        echo '```'
        collsel compare --collective bcast "$OUT/bcast-predicted-$model.csv" "$OUT/bcast-sweep.csv"
        echo '```'
    done
    echo
    echo "Measurements the fit needed vs the sweep: the \`measurements:\` line of lmo-check above."
} > "$OUT/FIGURES.md"
echo "- end: $(date -u +%FT%TZ), uptime: $(uptime)" >> "$PROV"
log "done: $OUT/FIGURES.md"
