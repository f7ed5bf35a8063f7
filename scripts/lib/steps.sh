# Steps of a prepared device check, sourced by scripts/gpu-check.sh and
# scripts/device-check.sh. The caller sets OUTDIR and SUMMARY before sourcing.
#
# A lent machine's time is counted to the second and nothing can be rerun cheaply, so
# every step runs under `timeout`, writes its whole output to OUTDIR/NAME.txt, and says
# its command, exit status and time in the summary as it ends.

say() { echo "== $*" | tee -a "$SUMMARY"; }

# step NAME SECONDS COMMAND...: output to NAME.txt, exit status and time to the summary.
step() {
    local name=$1 limit=$2
    shift 2
    say "$name: $* (limit ${limit}s)"
    local start rc
    start=$(date +%s)
    timeout -k 5 "$limit" "$@" > "$OUTDIR/$name.txt" 2>&1
    rc=$?
    say "$name: exit $rc after $(( $(date +%s) - start ))s"
    tail -n 60 "$OUTDIR/$name.txt"
}
