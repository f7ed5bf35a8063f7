#!/bin/bash
# What tracing netrx's events costs a loopback round trip, every tracer on one scale: the
# same workload (sockperf ping-pong, client and server on CPU 0, 64-byte messages), the
# same figure (sockperf's p50 round trip, read by this script), the same interleaving, in
# one window, for five configurations:
#
#   off         nothing attached
#   bt-empty    bpftrace, empty probes on netrx's six host tracepoints
#   bt-spans    bpftrace, netrx's host spans as hist()s
#   pl-empty    perflab's trace monitor (netrx), every program `r0 = 0; exit`
#               (PERFLAB_TRACE_EMPTY_PROGRAMS=1): the floor of its attachments
#   pl-match    perflab's trace monitor (netrx), matching programs, as shipped
#
#   scripts/trace-floor.sh PATH/TO/perflab [ROUNDS] [SECONDS]   (root; bpftrace, sockperf, python3)
#
# perflab traces as an outside tracer, as bpftrace does: `perflab run --workload exec
# --monitors trace:netrx` with a telemetry repetition (the only kind the trace monitor
# runs in) whose command holds the programs attached until this script has measured, so
# perflab's attachment is machine-wide and sockperf never runs under perflab. Every tracer
# runs on the last CPU, away from CPU 0. bpftrace needs tracefs at /sys/kernel/tracing:
# where it is not mounted the script mounts it for the run (and unmounts it after), and a
# bpftrace that does not attach every probe ends the script rather than give a row of no
# tracer (scripts/lib/tracers.sh).
#
# Each round runs every configuration once, in an order rotated every round. A
# configuration's row is the median over rounds of its p50 over the p50 of the round's
# `off` run, with the order-statistic interval of those ratios (binomial coverage >= 95 %,
# as `perflab crosscheck`'s pairs: 6 rounds at least); the last row is perflab matching
# over perflab empty, round by round: what matching costs above the floor.
set -u
PERFLAB=${1:?usage: trace-floor.sh PATH/TO/perflab [ROUNDS] [SECONDS]}
ROUNDS=${2:-8}
SECS=${3:-2}
PORT=11311
. "$(dirname "$0")/lib/tracers.sh"

for t in bpftrace sockperf taskset python3; do
    command -v $t > /dev/null || { echo "trace-floor: $t is missing (apt-get install bpftrace sockperf python3)" >&2; exit 2; }
done
[ -x "$PERFLAB" ] || { echo "trace-floor: $PERFLAB is not an executable" >&2; exit 2; }
case $ROUNDS in '' | *[!0-9]*) echo "trace-floor: ROUNDS must be a number" >&2; exit 2 ;; esac
[ "$ROUNDS" -ge 6 ] || { echo "trace-floor: at least 6 rounds (fewer give no 95% interval)" >&2; exit 2; }
TRACER_CPU=$(($(nproc) - 1))
WORK=$(mktemp -d)
SERVER=
TRACER=
cleanup() {
    [ -n "$TRACER" ] && { release; kill -INT "$TRACER" 2> /dev/null; wait "$TRACER" 2> /dev/null; }
    [ -n "$SERVER" ] && kill "$SERVER" 2> /dev/null
    tracefs_restore
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
tracefs_mount || exit 1
taskset -c 0 sockperf server -i 127.0.0.1 -p $PORT > /dev/null 2>&1 &
SERVER=$!
sleep 0.5

# p50 round trip in µs: sockperf's percentiles are of half a round trip.
p50() {
    taskset -c 0 sockperf ping-pong -i 127.0.0.1 -p $PORT -t "$SECS" --msg-size 64 2> /dev/null |
        awk '/percentile 50.000/ { printf "%.3f\n", 2 * $NF }'
}

# waits up to 20 s for FILE to exist (or PROCESS to end): 0 when it did.
await() {
    for _ in $(seq 200); do
        [ -e "$1" ] && return 0
        kill -0 "$2" 2> /dev/null || return 1
        sleep 0.1
    done
    return 1
}

# lets perflab's held command end (a FIFO nobody reads is not waited for).
release() {
    [ -p "$WORK/go" ] && timeout 5 sh -c "echo > '$WORK/go'" 2> /dev/null
    return 0
}

# bpftrace PROGRAM attached, then p50; a bpftrace that did not attach ends the script (a
# p50 with nothing attached would be read as bpftrace's).
with_bpftrace() {
    bpftrace_start "$1" || exit 1
    p50
    bpftrace_stop
}

# perflab's trace monitor (netrx) attached, then p50; ENV... set for perflab. The exec
# command's headline repetition (first, untraced) returns at once; its telemetry
# repetition, traced, says it started and holds, blocked in a read of a FIFO (no process
# started meanwhile, as bpftrace starts none), until this script writes to it.
with_perflab() {
    rm -f "$WORK/first" "$WORK/ready" "$WORK/go"
    mkfifo "$WORK/go"
    local cmd="[ -e $WORK/first ] || { touch $WORK/first; echo value 1; exit 0; }; \
touch $WORK/ready; read -r _ < $WORK/go; echo value 1"
    env "$@" taskset -c $TRACER_CPU "$PERFLAB" --db "$WORK/pl.db" run --workload exec \
        -p "cmd=$cmd" -p 'regex=value (\d+)' -p timeout=600s --monitors trace:netrx \
        --reps 1 --telemetry-reps 1 > "$WORK/pl.log" 2>&1 &
    TRACER=$!
    if await "$WORK/ready" $TRACER; then
        sleep 0.3
        p50
    else
        echo "trace-floor: perflab's trace monitor did not start; its output:" >&2
        tail -5 "$WORK/pl.log" >&2
    fi
    release
    wait $TRACER 2> /dev/null
    TRACER=
    grep -q 'trace: measured in the kernel (BPF backend)' "$WORK/pl.log" ||
        echo "trace-floor: perflab did not trace with BPF: $(grep 'trace:' "$WORK/pl.log" | head -2)" >&2
}

CONFIGS=(off bt-empty bt-spans pl-empty pl-match)
N=${#CONFIGS[@]}
TABLE="$WORK/table"
echo "round  ${CONFIGS[*]}   (p50 round trip, µs)"
for r in $(seq "$ROUNDS"); do
    declare -A V=()
    for k in $(seq 0 $((N - 1))); do
        c=${CONFIGS[$(((k + r) % N))]}
        case $c in
            off) V[$c]=$(p50) ;;
            bt-empty) V[$c]=$(with_bpftrace "$BT_EMPTY") || exit 1 ;;
            bt-spans) V[$c]=$(with_bpftrace "$BT_SPANS") || exit 1 ;;
            pl-empty) V[$c]=$(with_perflab PERFLAB_TRACE_EMPTY_PROGRAMS=1) ;;
            pl-match) V[$c]=$(with_perflab) ;;
        esac
    done
    line="$r"
    for c in "${CONFIGS[@]}"; do line="$line ${V[$c]:-nan}"; done
    echo "$line" | tee -a "$TABLE"
done

# Ratios per round, their median and order-statistic interval (as crosscheck's pairs).
python3 - "$TABLE" "${CONFIGS[@]}" << 'EOF'
import math, sys
rows = [l.split()[1:] for l in open(sys.argv[1])]
names = sys.argv[2:]
cols = {n: [float(r[i]) for r in rows] for i, n in enumerate(names)}

def estimate(ratios):
    r = sorted(x for x in ratios if math.isfinite(x) and x > 0)
    n = len(r)
    below, k = 0.0, 0
    for j in range(n // 2):
        below += math.comb(n, j) / 2 ** n
        if 2 * below <= 0.05 + 1e-12:
            k = j + 1
        else:
            break
    if n == 0:
        return "no rounds"
    med = r[n // 2] if n % 2 else (r[n // 2 - 1] + r[n // 2]) / 2
    ci = f"[{r[k - 1]:.4f}, {r[n - k]:.4f}]" if k else "[no 95% interval]"
    return f"{med:.4f} {ci}  (rounds: {' '.join(f'{x:.4f}' for x in ratios)})"

label = {
    "bt-empty": "bpftrace, empty probes (6 tracepoints)  ",
    "bt-spans": "bpftrace, netrx's spans as hist()s      ",
    "pl-empty": "perflab trace netrx, empty programs     ",
    "pl-match": "perflab trace netrx, matching programs  ",
}
print("p50 ratio against nothing attached, median of the rounds [95% interval]:")
for n in names[1:]:
    print(f"  {label[n]} {estimate([a / b for a, b in zip(cols[n], cols['off'])])}")
print("perflab matching over perflab empty, round by round:")
print(f"  {'perflab matching / empty programs       '} "
      f"{estimate([a / b for a, b in zip(cols['pl-match'], cols['pl-empty'])])}")
EOF
