# Sourced by the measure scripts of bench-data/: `run CMD...` runs a command and appends it to
# $PROV (the script's PROVENANCE.md) with the load average at its start and its wall time.
run() {
    local t0 load; t0=$(date +%s); load=$(cut -d' ' -f1-3 /proc/loadavg)
    "$@"
    echo "- \`$*\`: start $(date -u -d @"$t0" +%H:%M:%SZ), load $load, wall $(( $(date +%s) - t0 )) s" >> "$PROV"
}
