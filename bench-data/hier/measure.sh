#!/usr/bin/env bash
# Hierarchical reduce and bcast (issue 21): measured here and on the emulated cluster, and
# libcollsel running a tree with a hierarchical region on the cluster.
#   bench-data/hier/measure.sh [OUTDIR]      (default: this directory; make measure-hier)
#   SMALL=1 bench-data/hier/measure.sh /tmp/x   a 1-3 minute reduced run
# Steps (paired sweeps: every method of a P in the same launch, shuffled rounds):
#   1. this machine, P = 4, 8 (oversubscribed): flat linear, chain, pipeline (segment size 0),
#      Open MPI's default (algorithm 0), and hier:G:A:A for G = 2, 4 and each flat A; the
#      split cost of every hierarchical method from one benchmark launch per P;
#   2. the emulated cluster, 4 nodes x 2 ranks (P = 8, ranks mapped by node, so G = 4 groups
#      are the nodes), the same methods;
#   3. trees built from the cluster tables, run by libcollsel on the cluster (coll_time.c,
#      unmodified) against Open MPI's default, per message size;
#   4. a pathological tree under libcollsel here (64-byte segments at m >= 2048, P = 4) against
#      the default: proof that the decision takes effect;
#   5. the interposition's overhead (speed/libcollsel/bench.sh).
# FIGURES.md: `collsel hier` tables (speedup over flat per (P, m), measured best G vs model G,
# split cost) and the run lines of steps 3-5; PROVENANCE.md: commands, load, commit.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(mkdir -p "${1:-$(dirname "$0")}" && cd "${1:-$(dirname "$0")}" && pwd)
SMALL=${SMALL:-0}
B=$REPO/build/hier-measure            # programs and trees the cluster nodes must see (not /tmp)
CLUSTER_DIR=${COLLSEL_CLUSTER_DIR:-/var/lib/collsel/cluster}
cluster_up=0
cleanup() { if [ "$cluster_up" = 1 ]; then collsel cluster down >/dev/null 2>&1 || true; fi; }
trap cleanup EXIT INT TERM

if [ "$SMALL" = 1 ]; then
    LOCAL_P=4; SIZES=16K,1M; LAUNCHES=2; CL_SIZES=64K,1M; CL_LAUNCHES=2; REPS=5
else
    LOCAL_P=4,8; SIZES=16K,128K,1M; LAUNCHES=3; CL_SIZES=16K,128K,1M; CL_LAUNCHES=3; REPS=9
fi
RATE=1gbit
FLAT=(linear chain pipeline:0)
ALGS=linear,chain,pipeline:0
for a in linear chain pipeline; do for g in 2 4; do ALGS+=",hier:$g:$a:$a"; done; done
SPLIT_METHODS=""    # the benchmark's --methods for the split cost: hierarchical ids only
for a in 1 2 3; do for g in 2 4; do SPLIT_METHODS+="${SPLIT_METHODS:+,}$((1000000 + g * 100 + a * 11)):0"; done; done

log() { echo "[measure-hier $(date +%H:%M:%S)] $*"; }
PROV=$OUT/PROVENANCE.md
{
    echo "# Provenance: bench-data/hier/measure.sh"
    echo "- commit: $(git -C "$REPO" rev-parse HEAD)"
    echo "- start: $(date -u +%FT%TZ), uptime: $(uptime)"
    echo "- SMALL=$SMALL; local P=$LOCAL_P sizes=$SIZES launches=$LAUNCHES; cluster 4 nodes x 2 at $RATE, sizes=$CL_SIZES launches=$CL_LAUNCHES"
    echo; echo "Commands:"
} > "$PROV"
run() { echo "- \`$*\`" >> "$PROV"; "$@"; }

log "building libcollsel, the benchmark and the timing program into $B"
mkdir -p "$B"
run make -s -C "$REPO" libcollsel
LIB=$REPO/build/libcollsel/openmpi/libcollsel.so
run mpicc.openmpi -O2 "$REPO"/generator/collsel/sources/measure/bench/*.c -o "$B/collsel_bench" -lm
run mpicc.openmpi -O2 -std=c99 "$REPO/speed/libcollsel/coll_time.c" -o "$B/coll_time"
LOCAL_MPI=(timeout 300 mpirun.openmpi --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1
           --bind-to none --mca coll_tuned_use_dynamic_rules 1)

# ---- 1. this machine ----
for c in reduce bcast; do
    log "local $c sweep: P=$LOCAL_P, sizes $SIZES, $LAUNCHES launches"
    rm -f "$OUT/local-$c.csv" "$OUT/local-$c.csv.launches"
    run collsel sweep --collective "$c" --comm-sizes "$LOCAL_P" --msg-sizes "$SIZES" \
        --algorithms "$ALGS" --launches "$LAUNCHES" --out "$OUT/local-$c.csv" --force
    for p in ${LOCAL_P//,/ }; do
        run "${LOCAL_MPI[@]}" -np "$p" "$B/collsel_bench" --collective "$c" --sizes 1 \
            --methods "$SPLIT_METHODS" --min-reps 2 --max-reps 3 > "$OUT/split-local-$c-P$p.txt"
    done
done

# ---- 2. the emulated cluster ----
log "cluster: 4 nodes at $RATE (under /tmp/collsel-cluster-use.lock)"
exec 9> /tmp/collsel-cluster-use.lock
flock -w 900 9
collsel cluster down >/dev/null 2>&1 || true
run collsel cluster up --nodes 4 --rate "$RATE"
cluster_up=1
# The cluster's launch environment (OMPI_MCA_*) only in this subshell: the local runs after it
# must not see it, and `cluster down` finds processes by it.
(
# shellcheck disable=SC1091
. "$CLUSTER_DIR/env"
CL_MPI=(timeout 300 mpirun --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1
        --bind-to none --mca coll_tuned_use_dynamic_rules 1 --host n1:2,n2:2,n3:2,n4:2 -np 8
        --map-by ppr:2:node)
for c in reduce bcast; do
    log "cluster $c sweep: 4 nodes x 2 ranks, sizes $CL_SIZES, $CL_LAUNCHES launches"
    rm -f "$OUT/cluster-$c.csv" "$OUT/cluster-$c.csv.launches"
    run collsel sweep --cluster --nodes 4 --ppn 2 --collective "$c" --msg-sizes "$CL_SIZES" \
        --algorithms "$ALGS" --launches "$CL_LAUNCHES" --out "$OUT/cluster-$c.csv" --force
    run "${CL_MPI[@]}" "$B/collsel_bench" --collective "$c" --sizes 1 \
        --methods "$SPLIT_METHODS" --min-reps 2 --max-reps 3 > "$OUT/split-cluster-$c-P8.txt"
done

# ---- 3. libcollsel on the cluster: trees of the cluster tables against the default ----
mkdir -p "$B/trees-cluster"
rm -f "$B/trees-cluster/"*.bin
for c in reduce bcast; do
    run collsel build "$OUT/cluster-$c.csv" --collective "$c" --out "$OUT/tree-cluster-$c" >/dev/null
    run collsel emit --target blob "$OUT/tree-cluster-$c/tree.json" --out "$B/trees-cluster/$c.bin" >/dev/null
    cp "$B/trees-cluster/$c.bin" "$OUT/tree-cluster-$c/tree.bin"
done
: > "$OUT/libcollsel-cluster.txt"
for c in reduce bcast; do
    sizes=$(echo "$CL_SIZES" | sed 's/K/*1024/g; s/M/*1048576/g' | tr ',' '\n' | while read -r e; do echo $((e)); done | tr '\n' ' ')
    log "libcollsel on the cluster: $c at P=8, sizes $sizes"
    for m in $sizes; do
        echo "decision $c P=8 m=$m $(collsel query "$OUT/tree-cluster-$c/tree.json" --ids --comm-size 8 --msg-size "$m")" >> "$OUT/libcollsel-cluster.txt"
    done
    # shellcheck disable=SC2086
    run "${CL_MPI[@]}" -x LD_PRELOAD="$LIB" -x COLLSEL_TREES="$B/trees-cluster" "$B/coll_time" "$c" "$REPS" $sizes | sed 's/^/libcollsel /' >> "$OUT/libcollsel-cluster.txt"
    # shellcheck disable=SC2086
    run "${CL_MPI[@]}" "$B/coll_time" "$c" "$REPS" $sizes | sed 's/^/default /' >> "$OUT/libcollsel-cluster.txt"
done
)
run collsel cluster down
cluster_up=0
flock -u 9

# ---- 4. a pathological tree under libcollsel, here ----
log "pathological tree under libcollsel (P=4)"
mkdir -p "$B/trees-patho"
: > "$OUT/libcollsel-pathological.txt"
for c in bcast reduce; do
    run python3 "$REPO/speed/libcollsel/make_tree.py" patho "$c" "$B/trees-patho/$c.json"
    run collsel emit --target blob "$B/trees-patho/$c.json" --out "$B/trees-patho/$c.bin" >/dev/null
    for m in 1024 1048576; do
        echo "decision $c P=4 m=$m $(collsel query "$B/trees-patho/$c.json" --ids --comm-size 4 --msg-size $m)" >> "$OUT/libcollsel-pathological.txt"
    done
    run "${LOCAL_MPI[@]}" -np 4 -x LD_PRELOAD="$LIB" -x COLLSEL_TREES="$B/trees-patho" "$B/coll_time" "$c" "$REPS" 1024 1048576 | sed 's/^/libcollsel /' >> "$OUT/libcollsel-pathological.txt"
    run "${LOCAL_MPI[@]}" -np 4 "$B/coll_time" "$c" "$REPS" 1024 1048576 | sed 's/^/default /' >> "$OUT/libcollsel-pathological.txt"
done

# ---- 5. overhead ----
log "overhead benchmark"
run "$REPO/speed/libcollsel/bench.sh" "$B/overhead" > "$OUT/overhead.txt"

# ---- FIGURES.md ----
log "FIGURES.md"
lines_md() {   # the time lines of a run file as a table: with libcollsel vs default, per m
    python3 - "$1" <<'EOF'
import re, sys
rows, dec = {}, {}
for line in open(sys.argv[1]):
    d = re.match(r"decision (\w+) P=(\d+) m=(\d+) (.*)", line)
    if d:
        dec[(d[1], int(d[3]))] = d[4]
        continue
    who = line.split()[0] if line.strip() else ""
    for t in re.finditer(r"time (\w+) P=(\d+) m=(\d+) us=([\d.]+)", line):
        rows.setdefault((t[1], int(t[2]), int(t[3])), {})[who] = float(t[4])
print("| collective | P | m | tree's decision (alg seg fan) | libcollsel µs | default µs | default / libcollsel |")
print("|---|---|---|---|---|---|---|")
for (c, p, m), r in sorted(rows.items()):
    lib, base = r.get("libcollsel"), r.get("default")
    ratio = f"{base / lib:.2f}" if lib and base else "-"
    print(f"| {c} | {p} | {m} | {dec.get((c, m), '-')} | {lib} | {base} | {ratio} |")
EOF
}
{
    echo "# Hierarchical reduce and bcast; libcollsel (issue 21)"
    echo
    echo "Made by \`bench-data/hier/measure.sh\` (SMALL=$SMALL), $(date -u +%FT%TZ); every table below"
    echo "is computed from the data files beside it. Flat methods: linear, chain, pipeline (segment"
    echo "size 0), Open MPI's default; hierarchical: hier:G:A:A (A inside the G groups of consecutive"
    echo "ranks and among the leaders), G = 2, 4. Model G: models/reduce.py (Hockney), divisors of P."
    echo
    echo "## 1. This machine (one node, oversubscribed)"
    for c in reduce bcast; do
        echo
        collsel hier "$OUT/local-$c.csv" --split "$OUT"/split-local-"$c"-P*.txt --title "local $c"
    done
    echo
    echo "## 2. Emulated cluster: 4 nodes x 2 ranks, $RATE links (G = 4: one group per node)"
    for c in reduce bcast; do
        echo
        collsel hier "$OUT/cluster-$c.csv" --split "$OUT/split-cluster-$c-P8.txt" --title "cluster $c"
    done
    echo
    echo "## 3. libcollsel on the cluster: the trees of section 2 against Open MPI's default (coll_time.c, median of $REPS, P = 8)"
    echo
    echo "A decision above 1000000 is hierarchical (1000000 + G*100 + inner*10 + outer)."
    echo
    lines_md "$OUT/libcollsel-cluster.txt"
    echo
    echo "## 4. A pathological tree under libcollsel (this machine, P = 4): the decision takes effect"
    echo
    lines_md "$OUT/libcollsel-pathological.txt"
    echo
    echo "## 5. Overhead (make bench-libcollsel)"
    echo
    echo '```'
    grep -v '^/' "$OUT/overhead.txt" || true
    echo '```'
} > "$OUT/FIGURES.md.part"
mv "$OUT/FIGURES.md.part" "$OUT/FIGURES.md"
echo "- end: $(date -u +%FT%TZ), uptime: $(uptime)" >> "$PROV"
log "done: $OUT/FIGURES.md"
