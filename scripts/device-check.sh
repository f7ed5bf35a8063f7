#!/bin/bash
# Every check perflab owes a lent device machine (16 CPUs, one NVIDIA GPU, root, no
# network, no cargo), prepared as one run of about 6 minutes and at most 10:
#
#  1. Issue 23 at 16 CPUs: what the `trace` monitor costs ctxsw and netrr (`crosscheck
#     monitors --monitor-sets trace`) with the tracefs text backend and then the BPF
#     backend, side by side on one machine, with the events each lost (the text backend's
#     "the kernel dropped N events" notes; the BPF backend streams nothing), and
#     `crosscheck trace` (the two backends' spans agree on loopback netrr).
#  2. Issue 25: scripts/gpu-check.sh (doctor, `run gpu-xfer --quick`, its comparisons and
#     report, `crosscheck gpu`) with a shorter budget, where a GPU driver is present.
#
#   scripts/device-check.sh PATH/TO/perflab [OUTDIR]
#
# OUTDIR defaults to $OUT (the device machine's result folder), else ./device-check-out:
# summary.txt, one file per step, and gpu/ for the GPU part. Tried here first on 2 CPUs
# (and the GPU part on the stand-in driver: PERFLAB_LIBCUDA=.../libcuda_standin.so).
set -u
PERFLAB=${1:?usage: device-check.sh PATH/TO/perflab [OUTDIR]}
OUTDIR=${2:-${OUT:-./device-check-out}}
mkdir -p "$OUTDIR"
SUMMARY="$OUTDIR/summary.txt"
: > "$SUMMARY"
HERE=$(dirname "$0")

# shellcheck source=lib/steps.sh
. "$HERE/lib/steps.sh"

{
    date -u
    uname -a
    echo "cpus: $(nproc)"
    lscpu 2>/dev/null | grep -E 'Model name|Socket|Core|Thread|NUMA node\(s\)'
    cat /sys/devices/system/cpu/vulnerabilities/spectre_v2 2>/dev/null
} > "$OUTDIR/machine.txt" 2>&1
say "machine: $(head -c 400 "$OUTDIR/machine.txt" | tr '\n' ' ')"

# 1. trace at this machine's size. The text backend first: it is the one that loses
# events, and its notes say how many per measurement.
DB="$OUTDIR/trace.db"
rm -f "$DB"
CM=(crosscheck monitors --workloads ctxsw,netrr --monitor-sets trace --monitor-pairs 8)
step trace-text 100 env PERFLAB_TRACE_BACKEND=text "$PERFLAB" --db "$DB" "${CM[@]}" --max-pairs 12
step trace-bpf 110 "$PERFLAB" --db "$DB" "${CM[@]}" --max-pairs 24
for b in text bpf; do
    say "trace-$b: $(grep -c 'the kernel dropped' "$OUTDIR/trace-$b.txt") notes of dropped events; $(grep -o 'dropped [0-9,]* events' "$OUTDIR/trace-$b.txt" | head -3 | tr '\n' ' ')"
done
step trace-agree 60 "$PERFLAB" --db "$DB" crosscheck trace --duration 1s --rounds 2

# 2. The GPU, where there is a driver to load.
if [ -n "${PERFLAB_LIBCUDA:-}" ] || command -v nvidia-smi > /dev/null; then
    GPU_CHECK_SIZES=64K,256M GPU_CHECK_XFER_LIMIT=90 GPU_CHECK_CROSS_LIMIT=180 \
        "$HERE/gpu-check.sh" "$PERFLAB" "$OUTDIR/gpu" > "$OUTDIR/gpu-check.txt" 2>&1
    say "gpu: exit $? ($(grep -c 'exit 0 ' "$OUTDIR/gpu/summary.txt") steps exited 0); see gpu/summary.txt"
    cat "$OUTDIR/gpu/summary.txt" >> "$SUMMARY"
else
    say "gpu: no NVIDIA driver here (no nvidia-smi, PERFLAB_LIBCUDA unset): skipped"
fi
say "done; results in $OUTDIR"
