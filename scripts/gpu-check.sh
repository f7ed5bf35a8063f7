#!/bin/bash
# The GPU check of issue 25, prepared to run once on a lent machine (one NVIDIA GPU,
# root, the CUDA driver, no network, no cargo): doctor's gpu line, the gpu-xfer study in
# its quick form, its comparisons, and the cross-check against a plain CUDA-events loop.
# Every step runs under `timeout`: at most 30 + 260 + 20 + 6 × 20 + 240 s, under 12
# minutes.
#
#   scripts/gpu-check.sh PATH/TO/perflab [OUTDIR]
#
# OUTDIR defaults to $OUT (the device machine's result folder), else ./gpu-check-out.
# Everything goes there: one file per step and summary.txt. To try it without a GPU,
# point perflab at the stand-in driver library:
#   PERFLAB_LIBCUDA=$CARGO_TARGET_DIR/debug/libcuda_standin.so scripts/gpu-check.sh ...
# scripts/device-check.sh runs it after the other device checks with a shorter budget:
# GPU_CHECK_SIZES (the cross-check's sizes), GPU_CHECK_XFER_LIMIT and
# GPU_CHECK_CROSS_LIMIT (seconds for the study and the cross-check).
set -u
SIZES=${GPU_CHECK_SIZES:-64K,16M,256M}
XFER_LIMIT=${GPU_CHECK_XFER_LIMIT:-260}
CROSS_LIMIT=${GPU_CHECK_CROSS_LIMIT:-240}
PERFLAB=${1:?usage: gpu-check.sh PATH/TO/perflab [OUTDIR]}
OUTDIR=${2:-${OUT:-./gpu-check-out}}
mkdir -p "$OUTDIR"
SUMMARY="$OUTDIR/summary.txt"
: > "$SUMMARY"

# shellcheck source=lib/steps.sh
. "$(dirname "$0")/lib/steps.sh"

{
    date -u
    uname -a
    echo "cpus: $(nproc)"
    grep -E 'MemTotal|HugePages_(Total|Free)|Hugepagesize' /proc/meminfo
    echo "thp: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
    echo "PERFLAB_LIBCUDA=${PERFLAB_LIBCUDA:-}"
    command -v nvidia-smi > /dev/null && timeout 20 nvidia-smi
} > "$OUTDIR/machine.txt" 2>&1
say "machine: $(head -c 300 "$OUTDIR/machine.txt" | tr '\n' ' ')"

step doctor 30 "$PERFLAB" doctor

# The study reserves its own 2 MiB pages (knob hugepages=2M:auto) and gives them back.
DB="$OUTDIR/gpu.db"
rm -f "$DB"
step gpu-xfer "$XFER_LIMIT" "$PERFLAB" --db "$DB" run gpu-xfer --quick
# Should the timeout have killed the run, the pool it grew is given back from the journal.
step restore 20 "$PERFLAB" restore
for v in pinned 2m thp; do
    step "compare-4k-$v" 20 "$PERFLAB" --db "$DB" compare 1 --variants "4k,$v"
done
step compare-markdown 20 "$PERFLAB" --db "$DB" compare 1 --variants 4k,pinned --format markdown
# The seed's table (one column per host memory kind) and, in the HTML, its plot.
step report-mail 20 "$PERFLAB" --db "$DB" report 1 --section comparison --format mail
step report-html 20 "$PERFLAB" --db "$DB" report 1 --html "$OUTDIR/gpu-xfer.html"

# The cross-check's 2m rows need a pool of their own: 256 MiB on each side, one at a
# time, so 160 pages; grown only for this step and put back as it was. Not with the
# stand-in library: that is a trial on a shared machine, whose pool is not ours.
POOL=/proc/sys/vm/nr_hugepages
ORIG=$(cat "$POOL" 2>/dev/null || echo "")
GREW=no
if [ -z "${PERFLAB_LIBCUDA:-}" ] && [ -n "$ORIG" ] && [ "$ORIG" -lt 160 ]; then
    if echo 160 > "$POOL" 2>/dev/null; then
        GREW=yes
    else
        say "could not grow the hugetlb pool; the 2m rows will say so"
    fi
fi
# Interleaved pairs, 6-12 per pinned/2m row and 12-24 per pageable row: 0.1 s each.
step crosscheck-gpu "$CROSS_LIMIT" "$PERFLAB" crosscheck gpu --duration 0.1s --sizes "$SIZES"
if [ "$GREW" = yes ]; then
    echo "$ORIG" > "$POOL" 2>/dev/null
    say "hugetlb pool back to $(cat "$POOL" 2>/dev/null) pages (was $ORIG)"
fi
say "done; results in $OUTDIR"
