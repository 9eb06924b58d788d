#!/usr/bin/env bash
# Issue 29 on the emulated cluster (4 nodes x 2 ranks, P = 8, 1gbit): the recommended trees of
# allreduce and alltoall (built from this directory's sweeps) deployed two ways, each timed
# against Open MPI's default in fresh runs of an unmodified program (speed/libcollsel/coll_time.c):
#   rules       one Open MPI rules file of both trees (collsel emit --target ompi-rules),
#               --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename;
#   libcollsel  LD_PRELOAD build/libcollsel/openmpi/libcollsel.so, COLLSEL_TREES = the blobs
#               (column skipped, with a line saying so, where COLLSEL_TRACE=1 shows the library
#               passing the collective through: it interposes only the collectives it knows);
# over the sizes the sweeps measured at P = 8, the three variants alternating in every round.
#   flock /tmp/collsel-measure.lock bench-data/cluster-colls/deploy.sh [OUTDIR]
#   SMALL=1 bench-data/cluster-colls/deploy.sh /tmp/x      a 1-2 minute reduced run
# OUTDIR (default: this directory) gets deploy.txt (the times side by side per size),
# deploy-rules.conf, deploy-tree-<coll>/ (tree.json, tree.bin, build log) and
# deploy.PROVENANCE.md (commit, every command with its load average and wall time).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=$(mkdir -p "${1:-$HERE}" && cd "${1:-$HERE}" && pwd)
SMALL=${SMALL:-0}
CLUSTER_DIR=${COLLSEL_CLUSTER_DIR:-/var/lib/collsel/cluster}
B=$REPO/build/cluster-deploy          # what the cluster's nodes must read (not /tmp)
LIB=${LIBCOLLSEL:-$REPO/build/libcollsel/openmpi/libcollsel.so}   # LIBCOLLSEL: another build
COLLS=(allreduce alltoall)
if [ "$SMALL" = 1 ]; then ROUNDS=1; REPS=5; else ROUNDS=3; REPS=21; fi
RATE=1gbit
cluster_up=0
cleanup() { if [ "$cluster_up" = 1 ]; then collsel cluster down >/dev/null 2>&1 || true; fi; }
trap cleanup EXIT INT TERM
log() { echo "[deploy $(date +%H:%M:%S)] $*"; }

PROV=$OUT/deploy.PROVENANCE.md
{
    echo "# Provenance: bench-data/cluster-colls/deploy.sh"
    echo "- commit: $(git -C "$REPO" rev-parse HEAD)"
    echo "- host: $(hostname), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
    echo "- SMALL=$SMALL; cluster 4 nodes x 2 at $RATE; $ROUNDS round(s) of default, rules, libcollsel; coll_time median of $REPS calls"
    echo; echo "Commands (load average and wall time of each):"
} > "$PROV"
# shellcheck source=../provenance.sh
. "$REPO/bench-data/provenance.sh"

# The sizes each sweep measured at P = 8 (SMALL: the largest two).
sizes_of() {
    python3 - "$1" "$SMALL" <<'EOF'
import csv, sys
rows = csv.DictReader(line for line in open(sys.argv[1]) if not line.startswith("#"))
sizes = sorted({int(r["msg_size"]) for r in rows if int(r["comm_size"]) == 8})
print(" ".join(map(str, sizes[-2:] if sys.argv[2] == "1" else sizes)))
EOF
}

log "trees, rules file, blobs, programs into $B"
rm -rf "$B" && mkdir -p "$B/trees"
trees=()
for c in "${COLLS[@]}"; do
    rm -rf "$OUT/deploy-tree-$c"
    run collsel build "$HERE/$c-nodes-ppn.csv" --collective "$c" --recommend \
        --out "$OUT/deploy-tree-$c" > "$OUT/deploy-tree-$c.log" 2>&1
    mv "$OUT/deploy-tree-$c.log" "$OUT/deploy-tree-$c/build.log"
    run collsel emit --target blob "$OUT/deploy-tree-$c/tree.json" --out "$B/trees/$c.bin" >/dev/null
    cp "$B/trees/$c.bin" "$OUT/deploy-tree-$c/tree.bin"
    trees+=("$OUT/deploy-tree-$c/tree.json")
done
run collsel emit --target ompi-rules "${trees[@]}" --out "$B/rules.conf" > "$B/emit.txt"
cp "$B/rules.conf" "$OUT/deploy-rules.conf"
run make -s -C "$REPO" libcollsel
run mpicc.openmpi -O2 -std=c99 "$REPO/speed/libcollsel/coll_time.c" -o "$B/coll_time"

log "cluster: 4 nodes at $RATE (under /tmp/collsel-cluster-use.lock and the test sessions' lock)"
exec 8> /run/lock/collsel-cluster-tests.lock
flock -w 900 8
exec 9> /tmp/collsel-cluster-use.lock
flock -w 900 9
collsel cluster down >/dev/null 2>&1 || true
run collsel cluster up --nodes 4 --rate "$RATE"
cluster_up=1
# The cluster's launch environment only in this subshell (`cluster down` finds processes by it).
(
# shellcheck disable=SC1091
. "$CLUSTER_DIR/env"
CL_MPI=(timeout 600 mpirun --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1
        --bind-to none --host n1:2,n2:2,n3:2,n4:2 -np 8 --map-by ppr:2:node)
RULES=(--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename "$B/rules.conf")
# libcollsel forces through coll/tuned's variables: it passes everything through without this
PRELOAD=(--mca coll_tuned_use_dynamic_rules 1 -x LD_PRELOAD="$LIB" -x COLLSEL_TREES="$B/trees")
for c in "${COLLS[@]}"; do
    read -r -a sizes <<< "$(sizes_of "$HERE/$c-nodes-ppn.csv")"
    raw=$B/$c.raw
    for m in "${sizes[@]}"; do
        echo "decision $c m=$m tree $(collsel query "$OUT/deploy-tree-$c/tree.json" --ids --comm-size 8 --msg-size "$m") rules $(collsel check-rules "$B/rules.conf" --collective "$c" --ids --query 8 "$m")" >> "$raw"
    done
    # Does the library decide this collective? One call with its trace on.
    run "${CL_MPI[@]}" "${PRELOAD[@]}" -x COLLSEL_TRACE=1 "$B/coll_time" "$c" 1 "${sizes[0]}" \
        > /dev/null 2> "$B/$c.trace" || true
    if grep -q "^collsel-trace $c .*alg=" "$B/$c.trace"; then lib=1; else
        lib=0
        said=$(grep -m1 -e "collsel-trace $c" -e "^libcollsel:" "$B/$c.trace" || echo "no $c line")
        echo "skip libcollsel: it passes $c through here (COLLSEL_TRACE=1: $said)" >> "$raw"
    fi
    for r in $(seq "$ROUNDS"); do
        log "$c round $r of $ROUNDS: sizes ${sizes[*]}"
        run "${CL_MPI[@]}" "$B/coll_time" "$c" "$REPS" "${sizes[@]}" | sed 's/^/default /' >> "$raw"
        run "${CL_MPI[@]}" "${RULES[@]}" "$B/coll_time" "$c" "$REPS" "${sizes[@]}" | sed 's/^/rules /' >> "$raw"
        if [ "$lib" = 1 ]; then
            run "${CL_MPI[@]}" "${PRELOAD[@]}" "$B/coll_time" "$c" "$REPS" "${sizes[@]}" | sed 's/^/libcollsel /' >> "$raw"
        fi
    done
done
)
run collsel cluster down
cluster_up=0
flock -u 9
flock -u 8

log "deploy.txt"
python3 - "$ROUNDS" "$REPS" "${COLLS[@]/#/$B/}" > "$OUT/deploy.txt.part" <<'EOF'
import re, statistics, sys
rounds, reps, raws = sys.argv[1], sys.argv[2], sys.argv[3:]
print("# Recommended trees of allreduce and alltoall (bench-data/cluster-colls/*-nodes-ppn.csv)")
print("# deployed on the emulated cluster, 4 nodes x 2 ranks (P = 8), 1gbit links, against Open")
print(f"# MPI's default: fresh launches of coll_time.c, each size's median of {reps} calls (the")
print(f"# slowest rank's), the median over {rounds} round(s) of default, rules, libcollsel (µs).")
print("# decision: alg seg fan of the tree (collsel query) and of the rules file (check-rules)")
for raw in (r + ".raw" for r in raws):
    times, decisions, notes, coll = {}, {}, [], None
    for line in open(raw):
        d = re.match(r"decision (\w+) m=(\d+) tree (.*) rules (.*)", line)
        if d:
            coll = d[1]
            decisions[int(d[2])] = (d[3].strip(), d[4].strip())
            continue
        if line.startswith("skip "):
            notes.append(line.strip())
        t = re.match(r"(\w+) time (\w+) P=(\d+) m=(\d+) us=([\d.]+)", line)
        if t:
            times.setdefault(int(t[4]), {}).setdefault(t[1], []).append(float(t[5]))
    print(f"\n## {coll}")
    for n in notes:
        print(f"# {n}")
    print(f"{'m':>9} {'tree':>10} {'rules':>10} {'default':>10} {'rules':>10} {'libcollsel':>10}"
          f" {'def/rules':>9} {'def/lib':>8}")
    for m in sorted(decisions):
        med = {k: statistics.median(v) for k, v in times.get(m, {}).items()}
        base = med.get("default")
        cell = lambda k: f"{med[k]:10.1f}" if k in med else f"{'-':>10}"
        ratio = lambda k: f"{base / med[k]:.2f}" if k in med and base else "-"
        tree, rules = decisions[m]
        print(f"{m:>9} {tree.replace(' ', ':'):>10} {rules.replace(' ', ':'):>10} "
              f"{cell('default')} {cell('rules')} {cell('libcollsel')} {ratio('rules'):>9} "
              f"{ratio('libcollsel'):>8}")
EOF
mv "$OUT/deploy.txt.part" "$OUT/deploy.txt"
echo "- end: $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$PROV"
log "done: $OUT/deploy.txt"
