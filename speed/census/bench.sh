#!/usr/bin/env bash
# make bench-overhead (its census part): what libcollsel's census mode (COLLSEL_CENSUS, `collsel
# profile`) costs a collective-heavy program, three ways side by side, launches alternated round
# by round so drift hits all alike (Debian's Open MPI 4.1, this machine, P = 2):
#   plain       the program alone;
#   preloaded   LD_PRELOAD=libcollsel.so without trees or census: every call passes through;
#   census      LD_PRELOAD=libcollsel.so COLLSEL_CENSUS=PREFIX: every call counted and timed.
# The program is tests/integration/profile_app.c (N rounds of allreduce of 8 B and 8 KiB, every
# tenth a 64 KiB bcast and a barrier: 2.2 calls per round); its time is rank 0's MPI_Wtime over
# the N rounds. Prints per way the median (min, max) over ROUNDS launches, ns per call and the
# median's ratio to plain. Numbers of a shared machine: run it idle for figures to quote.
# Usage: speed/census/bench.sh [BUILD_DIR]   (default build/census-bench; ROUNDS=5, N=20000)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$REPO/build/census-bench}
ROUNDS=${ROUNDS:-5}
N=${N:-20000}
mkdir -p "$B"
make -s -C "$REPO" libcollsel >/dev/null
LIB=$REPO/build/libcollsel/openmpi/libcollsel.so
mpicc.openmpi -O2 -std=c99 -Wall -Wextra -Werror "$REPO/tests/integration/profile_app.c" \
    -o "$B/profile_app"
MPI=(timeout 300 mpirun.openmpi --allow-run-as-root --oversubscribe -np 2
     --mca mpi_yield_when_idle 1)
way() {   # way NAME: one launch, the seconds profile_app reports
    local out
    case $1 in
        plain) out=$("${MPI[@]}" "$B/profile_app" "$N") ;;
        preloaded) out=$("${MPI[@]}" -x LD_PRELOAD="$LIB" "$B/profile_app" "$N" \
                         2> >(grep -v "COLLSEL_TREES is not set" >&2)) ;;
        census) rm -f "$B"/census.*.json
                out=$("${MPI[@]}" -x LD_PRELOAD="$LIB" -x COLLSEL_CENSUS="$B/census" \
                      "$B/profile_app" "$N")
                [ -f "$B/census.1.json" ] || { echo "census: no census files" >&2; exit 1; } ;;
    esac
    sed -n 's/^profile_app ok [0-9]* in \([0-9.]*\) s$/\1/p' <<<"$out"
}
declare -A times
for ((r = 1; r <= ROUNDS; r++)); do
    for w in plain preloaded census; do
        times[$w]+="$(way $w) "
    done
done
python3 - "$N" "${times[plain]}" "${times[preloaded]}" "${times[census]}" <<'PY'
import statistics, sys
n = int(sys.argv[1])
calls = n * 2 + 2 * -(-n // 10)
ways = dict(zip(("plain", "preloaded", "census"), (list(map(float, a.split())) for a in sys.argv[2:])))
base = statistics.median(ways["plain"])
print(f"census overhead: profile_app {n} rounds ({calls} collective calls per rank), P = 2, "
      f"{len(ways['plain'])} launches per way, alternated")
for name, t in ways.items():
    med = statistics.median(t)
    print(f"  {name:<10} median {med:.4f} s (min {min(t):.4f}, max {max(t):.4f}), "
          f"{1e9 * med / calls:.0f} ns per call, x{med / base:.3f} of plain")
PY
