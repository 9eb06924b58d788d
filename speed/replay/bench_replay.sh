#!/bin/sh
# make bench-replay: wall time of `collsel tune --replay` on the 10,473-row paired table
# bench-data/paired/bcast-openmpi.csv (with its 52,360-row journal) at --budget 10%, under each
# strategy (adaptive, tune's default, first): the whole command (plan, coarse and refined sweeps,
# the tree, the curve), and the same with the curve's trees built exact (--score '') instead of
# the tune's --recommend. The stage times are tune's own progress lines (elapsed at each stage's
# start). Prints measured figures only; nothing asserts them.
set -eu
COLLSEL=${COLLSEL:-collsel}
TABLE=${TABLE:-bench-data/paired/bcast-openmpi.csv}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
rows=$(grep -vc '^#' "$TABLE")
echo "table: $TABLE ($((rows - 1)) rows)"
for strategy in adaptive coarse-refine; do
  for score in --recommend ""; do
    out="$scratch/run$(date +%s%N)"
    start=$(date +%s.%N)
    "$COLLSEL" tune --replay "$TABLE" --out "$out" --budget 10% --strategy "$strategy" \
        --score="$score" > "$out.stdout" 2> "$out.stderr"
    end=$(date +%s.%N)
    echo "--strategy $strategy --score '$score': $(echo "$end - $start" | bc) s whole command"
    grep -E '^collsel tune: \[' "$out.stderr" | sed 's/^collsel tune: /  /; s/ (about [^)]*); ETA [0-9:]*//'
    grep -E '^collsel tune: done' "$out.stderr" | sed 's/^collsel tune: /  /; s/; summary in .*//'
  done
done
