#!/usr/bin/env bash
# Issue 19 (utilization-aware selection): every Must-show figure, measured on the emulated
# cluster under iperf3 background traffic, and FIGURES.md computed from the data by collsel.
#   bench-data/load/measure.sh [OUTDIR]      (default: this directory; SMALL=1: 1-3 minutes)
# Run inside the cluster use lock when other helpers share the machine; root (the cluster).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=${1:-$HERE}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
SMALL=${SMALL:-0}
RATE=${RATE:-100mbit}           # low link rate: iperf3 saturates links, not the 2 CPUs
LEVELS=off,low,medium,high
SEED=${SEED:-19}
if [ "$SMALL" = 1 ]; then
    NODES=4; SIZES=4K,64K; ALGS=linear,pipeline:8K,binomial; LAUNCHES=2; FRESH=3; COST_CALLS=200
else
    # Sized for <= 10 minutes (estimate ~5): launches, not points, dominate. SMALL ran in 96 s
    # (its build sweep 8 launches of 8 cells in 33 s). These 28 cells, 6 launches at one level,
    # timed on the cluster (2 busy cores): 46 s under high, 22 s off. So the build sweep's 24
    # launches ~150 s, 10 fresh one-launch sweeps ~85 s, the rest (trees, 2 probe jobs of 1000
    # calls, report) ~70 s. 6 launches per level: 24 figure-2 pairs per (P, m, method).
    NODES=4; SIZES=1K,4K,16K,64K; ALGS=linear,chain:8K,pipeline:8K,binary:8K,split_binary:8K,binomial
    LAUNCHES=6; FRESH=10; COST_CALLS=1000
fi
FIG_SIZES=4096,65536            # the two message sizes of figure 2
log() { echo "measure-load: $*" >&2; }
down() { collsel cluster down >/dev/null 2>&1 || true; }
trap 'down; rm -rf "${BIN:-/nonexistent}"' EXIT
cmds=()
run() { cmds+=("$*"); log "$*"; "$@"; }

rm -rf "$OUT/fresh" "$OUT/build" "$OUT/report" "$OUT"/bcast-load.csv* "$OUT"/*.txt "$OUT"/*.json
mkdir -p "$OUT/fresh"
BIN=$(mktemp -d /var/tmp/collsel-load.XXXXXX)   # outside /tmp: the nodes have a private /tmp
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date +%s)

run mpicc -O2 -std=c11 -I"$REPO/include" "$REPO/runtime/examples/mpi_probe_query.c" \
    "$REPO/runtime/collsel_probe.c" "$REPO/runtime/collsel_tree.c" -lm -o "$BIN/mpi_probe_query"

down
run collsel cluster up --nodes 4 --rate "$RATE"

# 1. the build sweep: every method at every level, paired, probe before every round
run collsel sweep --collective bcast --cluster --nodes "$NODES" --ppn 1 --msg-sizes "$SIZES" \
    --algorithms "$ALGS" --launches "$LAUNCHES" --load iperf3 --load-levels "$LEVELS" \
    --seed "$SEED" --out "$OUT/bcast-load.csv"

# 2. fresh runs for scoring: one launch each, at a level drawn at random (seeded) per launch
RANDOM=$SEED
names=(off low medium high)
: > "$OUT/fresh/levels.txt"
for i in $(seq 1 "$FRESH"); do
    level=${names[$((RANDOM % 4))]}
    echo "fresh-$i $level" >> "$OUT/fresh/levels.txt"
    run collsel sweep --collective bcast --cluster --nodes "$NODES" --ppn 1 --msg-sizes "$SIZES" \
        --algorithms "$ALGS" --launches 1 --load iperf3 --load-levels "$level" \
        --seed $((SEED * 1000 + i)) --out "$OUT/fresh/fresh-$i.csv"
done

# 3. trees: load-aware (probe_us, binned), the scheduler's view (cluster_load), the level itself
for z in probe_us cluster_load load_level; do
    run collsel build "$OUT/bcast-load.csv" --collective bcast --z "$z" --out "$OUT/build/$z" \
        > "$OUT/build-$z.txt"
done
run collsel emit --target blob --out "$OUT/build/probe_us/tree.bin" "$OUT/build/probe_us/tree.json"
cp "$OUT/build/probe_us/tree.bin" "$BIN/tree.bin"

# 4. probe -> query3 inside an MPI job on the cluster under high load, and its probe cost
. /var/lib/collsel/cluster/env
P_MAX=${NODES##*,}
hosts=$(seq -s, 1 "$P_MAX" | sed 's/\([0-9]*\)/n\1:1/g')
for level in off high; do
    python3 - "$level" "$OUT" "$P_MAX" "$hosts" "$COST_CALLS" "${FIG_SIZES//,/ }" "$BIN" <<'EOF'
import subprocess, sys
from collsel import cluster
from collsel.sources.sweep import load
level, out, p, hosts, calls, sizes, bin_dir = sys.argv[1:8]
sizes = sizes.split()
gen = load.make("iperf3", cluster.load())
with gen.running(level):
    run = subprocess.run(["timeout", "120", "mpirun", "--allow-run-as-root", "--host", hosts,
                          "-np", p, "--map-by", "ppr:1:node", "--bind-to", "none",
                          "--mca", "mpi_yield_when_idle", "1", f"{bin_dir}/mpi_probe_query",
                          f"{bin_dir}/tree.bin", calls, *sizes],
                         capture_output=True, text=True)
sys.stderr.write(run.stderr[-2000:])
open(f"{out}/probe-query-{level}.txt", "w").write(run.stdout)
sys.exit(run.returncode)
EOF
    cmds+=("mpi_probe_query under iperf3 $level: mpirun -np $P_MAX bin/mpi_probe_query build/probe_us/tree.bin $COST_CALLS ${FIG_SIZES//,/ }")
done
down

# 5. FIGURES.md, from the data only
fresh_tables=("$OUT"/fresh/fresh-*.csv)
{
echo "# Issue 19 figures (bcast under iperf3 background load, emulated cluster)"
echo
echo "Made by \`bench-data/load/measure.sh\` (SMALL=$SMALL): 4 nodes, tbf $RATE, nodes $NODES x 1 ppn,"
echo "sizes $SIZES, methods $ALGS + Open MPI's default, $LAUNCHES paired launches per level ($LEVELS),"
echo "$FRESH fresh one-launch sweeps at levels drawn at random (seed $SEED): $(cut -d' ' -f2 "$OUT/fresh/levels.txt" | tr '\n' ' ')"
echo
echo "## Probe latency vs bcast latency (the paper's figure 2)"
echo
echo "One pair per launch: the launch's median round probe_us and the method's median time."
echo
collsel stats "$OUT/bcast-load.csv" --collective bcast --probe-latency --format markdown \
    --plot "$OUT/probe-vs-latency.png"
echo
echo "Plot: \`probe-vs-latency.png\` (the default's launches, per (P, m)); the same plot and table are"
echo "the \"Probe vs latency\" section of \`report/index.html\` (\`collsel report --z probe_us\`), beside"
echo "one set of decision-map panels per probe_us bin."
echo
echo "## Cells whose best method changes between load levels"
echo
for z in load_level probe_us cluster_load; do
    echo "- \`build --z $z\`: $(grep "^$z:" "$OUT/build-$z.txt" || true)"
done
echo
echo "## Load-aware octree vs load-oblivious quadtree vs Open MPI's default, on fresh runs"
echo
for z in probe_us cluster_load; do
    echo "\`collsel compare --fresh --z $z bcast-load.csv fresh/fresh-*.csv\`:"
    echo '```'
    collsel compare --fresh --collective bcast --z "$z" "$OUT/bcast-load.csv" "${fresh_tables[@]}"
    echo '```'
done
# the probe's measured cost: the median of the example program's per-run medians
PROBE_COST=$(grep -ho 'median_us=[0-9.]*' "$OUT"/probe-query-*.txt | cut -d= -f2 | sort -g \
    | awk '{v[NR] = $1} END {if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}')
collsel compare --fresh --collective bcast --z probe_us --format json \
    ${PROBE_COST:+--probe-cost-us "$PROBE_COST"} "$OUT/bcast-load.csv" "${fresh_tables[@]}" \
    > "$OUT/fresh-score.json"
echo
echo "## Probe cost, probe -> query3 in an MPI job, and cost vs gain"
echo
for level in off high; do
    echo "Under iperf3 $level (\`probe-query-$level.txt\`):"
    echo '```'
    cat "$OUT/probe-query-$level.txt"
    echo '```'
done
echo "Decisions of \`collsel query --z\` on the same (P, m, probe_us) points:"
echo '```'
cat "$OUT"/probe-query-*.txt | awk '/^decide/ {print $2, $3, $4}' | sed 's/:$//' \
    > "$OUT/points.txt"
collsel query "$OUT/build/probe_us/tree.json" --ids --points "$OUT/points.txt" > "$OUT/query.txt"
paste -d' ' "$OUT/points.txt" "$OUT/query.txt"
echo '```'
if diff <(cat "$OUT"/probe-query-*.txt | awk '/^decide/ {print $5, $6, $7}') "$OUT/query.txt" >/dev/null; then
    echo "Every decision of the example program equals \`collsel query --z\`."
else
    echo "**The example program and \`collsel query --z\` disagree** (see the files)."
fi
echo
if [ -n "$PROBE_COST" ]; then
    echo "Probe cost: $PROBE_COST µs (median of the example program's median_us above);"
    echo "\`collsel compare --fresh --z probe_us --probe-cost-us $PROBE_COST bcast-load.csv fresh/fresh-*.csv\`:"
    echo
    collsel compare --fresh --collective bcast --z probe_us --probe-cost-us "$PROBE_COST" \
        "$OUT/bcast-load.csv" "${fresh_tables[@]}" | grep -E 'saved per call|pays for itself' \
        | sed 's/^ */- /'
else
    echo "- no probe cost measured (see \`probe-query-*.txt\`)"
fi
} > "$OUT/FIGURES.md"

# 6. the report of the probe_us tree: one decision-map panel per probe bin, and (from the
# journal's probe_us) the probe-vs-latency plot with Pearson/Spearman per (P, m, method)
run collsel report "$OUT/bcast-load.csv" --collective bcast --z probe_us --out "$OUT/report" \
    > /dev/null || log "report failed"

{
echo "# Provenance"
echo
echo "- git: $(git -C "$REPO" rev-parse HEAD)"
echo "- host: $(hostname), $(nproc) cores; load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- wall: $(( $(date +%s) - started )) s; SMALL=$SMALL"
echo "- commands:"
for c in "${cmds[@]}"; do echo "  - \`$c\`"; done
} > "$OUT/PROVENANCE.md"
log "done: $OUT/FIGURES.md"
