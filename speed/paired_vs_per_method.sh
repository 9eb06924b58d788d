#!/bin/sh
# make bench-paired: the paired mode against the per-method mode on one grid, side by side.
#
# Four sweeps of the same bcast grid, alternating (per-method, paired, per-method, paired) so a
# drift of the machine lands on both modes, at equal launches and repetition caps (the paired
# sweep scales --time-cap by its number of methods, so each method gets the same time). Then,
# per mode, sweep A's best per cell scored on sweep B's times and back (`collsel compare`), and
# the wall time of each sweep. All four run under the machine-wide measurement lock; the
# tables land in OUT (default build/paired-vs-per-method) with their journals.
#
# Environment: OUT, COMM_SIZES (2,4,8,16), MSG_SIZES (20 sizes, 1 B - 4 MiB), LAUNCHES (3),
# TIME_CAP (0.01 s per method and point), MAX_REPS (50).
set -eu
OUT=${OUT:-build/paired-vs-per-method}
COMM_SIZES=${COMM_SIZES:-2,4,8,16}
MSG_SIZES=${MSG_SIZES:-1,2,4,8,16,64,256,1K,2K,4K,8K,16K,32K,64K,128K,256K,512K,1M,2M,4M}
LAUNCHES=${LAUNCHES:-3}
TIME_CAP=${TIME_CAP:-0.01}
MAX_REPS=${MAX_REPS:-50}
LOCK=/tmp/collsel-measure.lock
mkdir -p "$OUT"

sweep() {   # mode, name
    start=$(date +%s.%N)
    flock "$LOCK" collsel sweep --collective bcast --mode "$1" --out "$OUT/$2.csv" --force \
        --comm-sizes "$COMM_SIZES" --msg-sizes "$MSG_SIZES" --launches "$LAUNCHES" \
        --time-cap "$TIME_CAP" --max-reps "$MAX_REPS" --progress-interval 60
    end=$(date +%s.%N)
    python3 -c "print('$2', round($end - $start, 1))" >> "$OUT/wall.txt"
}

: > "$OUT/wall.txt"
sweep per-method per-method-A
sweep paired paired-A
sweep per-method per-method-B
sweep paired paired-B

for mode in per-method paired; do
    collsel compare "$OUT/$mode-A.csv" "$OUT/$mode-B.csv" --collective bcast --no-defer \
        --format json > "$OUT/$mode-compare.json"
done
python3 - "$OUT" <<'EOF'
import json, sys
out = sys.argv[1]
wall = dict(line.split() for line in open(f"{out}/wall.txt"))
print(f"{'mode':<11} {'sweep':>5} {'wall s':>8}   A->B mean / median / max   "
      f"B->A mean / median / max   in tie set   default (on B, on A)")
means = {}
for mode in ("per-method", "paired"):
    c = json.load(open(f"{out}/{mode}-compare.json"))
    ab, ba = c["A->B"], c["B->A"]
    fmt = lambda f: f"{f['mean']:6.2f} / {f['median']:6.2f} / {f['max']:7.1f}"  # noqa: E731
    tie = (ab["tree"]["in_tie_set"] + ba["tree"]["in_tie_set"]) / (
        ab["tree"]["cells"] + ba["tree"]["cells"])
    means[mode] = (ab["tree"]["mean"] + ba["tree"]["mean"]) / 2
    for name in ("A", "B"):
        print(f"{mode:<11} {name:>5} {float(wall[f'{mode}-{name}']):8.1f}")
    print(f"{mode:<11} {'':>5} {'':>8}   {fmt(ab['tree'])}   {fmt(ba['tree'])}   "
          f"{100 * tie:5.1f} %      {ab['default']['mean']:.2f} %, {ba['default']['mean']:.2f} %")
speed = sum(float(wall[f"per-method-{n}"]) for n in "AB") / sum(
    float(wall[f"paired-{n}"]) for n in "AB")
print(f"cross-sweep mean penalty, paired / per-method: {means['paired'] / means['per-method']:.3f}"
      " (target <= 0.5)")
print(f"wall time, per-method / paired: {speed:.2f}x (target >= 3)")
EOF
