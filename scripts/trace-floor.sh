#!/bin/bash
# What attaching BPF programs to netrx's events costs a loopback round trip when the
# tracer is bpftrace, the tool engineers trust for this, measured by sockperf; beside it,
# in the same window, perflab's own `trace` monitor measured by `crosscheck monitors`.
# It answers whether the cost of perflab's BPF backend on netrr (issue 23) is perflab's
# or the kernel's: bpftrace with EMPTY probes on the same tracepoints pays the floor too.
#
#   scripts/trace-floor.sh PATH/TO/perflab [ROUNDS] [SECONDS]     (root; bpftrace, sockperf)
#
# Client and server on CPU 0 (as crosscheck monitors' netrr), 64-byte messages. Each
# round runs every configuration once, in an order rotated every round; a
# configuration's ratio is the median over rounds of its p50 round trip over the p50 of
# the round's `off` run. bpftrace 0.17 (Debian 13) has classic tracepoints only.
set -u
PERFLAB=${1:?usage: trace-floor.sh PATH/TO/perflab [ROUNDS] [SECONDS]}
ROUNDS=${2:-6}
SECS=${3:-2}
PORT=11311
EVENTS="tracepoint:irq:softirq_raise, tracepoint:irq:softirq_entry, tracepoint:irq:softirq_exit, tracepoint:sched:sched_waking, tracepoint:sched:sched_switch, tracepoint:sock:sock_recv_length"
EMPTY="$EVENTS {}"
# netrx's host spans as bpftrace would write them: raised → softirq, softirq → wake-up,
# woken → running, running → receive; the softirq's exit cancels a wake-up never made.
MATCH='
tracepoint:irq:softirq_raise /args->vec == 3/ { @raise[cpu] = nsecs; }
tracepoint:irq:softirq_entry /args->vec == 3/ {
  $s = @raise[cpu]; if ($s) { @a = hist(nsecs - $s); @raise[cpu] = 0; } @wake[cpu] = nsecs; }
tracepoint:irq:softirq_exit /args->vec == 3/ { @wake[cpu] = 0; }
tracepoint:sched:sched_waking {
  $s = @wake[cpu]; if ($s) { @b = hist(nsecs - $s); @wake[cpu] = 0; } @woken[args->pid] = nsecs; }
tracepoint:sched:sched_switch {
  $s = @woken[args->next_pid]; if ($s) { @c = hist(nsecs - $s); @woken[args->next_pid] = 0; }
  @running[args->next_pid] = nsecs; }
tracepoint:sock:sock_recv_length {
  $s = @running[tid]; if ($s) { @d = hist(nsecs - $s); @running[tid] = 0; } }'

for t in bpftrace sockperf taskset; do
    command -v $t > /dev/null || { echo "trace-floor: $t is missing (apt-get install bpftrace sockperf)" >&2; exit 2; }
done
WORK=$(mktemp -d)
SERVER=
cleanup() {
    [ -n "$SERVER" ] && kill "$SERVER" 2> /dev/null
    pkill -INT -f "bpftrace.*trace-floor" 2> /dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
taskset -c 0 sockperf server -i 127.0.0.1 -p $PORT > /dev/null 2>&1 &
SERVER=$!
sleep 0.5

# p50 round trip in µs: sockperf's percentiles are of half a round trip.
p50() {
    taskset -c 0 sockperf ping-pong -i 127.0.0.1 -p $PORT -t "$SECS" --msg-size 64 2> /dev/null |
        awk '/percentile 50.000/ { printf "%.3f\n", 2 * $NF }'
}

# with PROGRAM: p50 while bpftrace runs PROGRAM (attached before sockperf starts).
with() {
    local log="$WORK/bt.log"
    : > "$log"
    # The comment marks our bpftrace for the cleanup.
    bpftrace -e "/* trace-floor */ $1" > "$log" 2>&1 &
    local bt=$!
    for _ in $(seq 100); do grep -q Attaching "$log" && break; sleep 0.1; done
    sleep 0.3
    p50
    kill -INT $bt 2> /dev/null
    wait $bt 2> /dev/null
}

CONFIGS=(off empty match)
declare -A RATIOS
echo "round  off_us  empty_us  match_us"
for r in $(seq "$ROUNDS"); do
    declare -A V=()
    for k in 0 1 2; do
        c=${CONFIGS[$(( (k + r) % 3 ))]}
        case $c in
            off) V[off]=$(p50) ;;
            empty) V[empty]=$(with "$EMPTY") ;;
            match) V[match]=$(with "$MATCH") ;;
        esac
    done
    echo "$r  ${V[off]}  ${V[empty]}  ${V[match]}"
    for c in empty match; do
        RATIOS[$c]+="$(awk -v a="${V[$c]}" -v b="${V[off]}" 'BEGIN { printf "%.4f ", a / b }')"
    done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "bpftrace, empty probes on netrx's 6 tracepoints: p50 ratio $(echo "${RATIOS[empty]}" | median) (rounds: ${RATIOS[empty]})"
echo "bpftrace, netrx's spans as hist()s:             p50 ratio $(echo "${RATIOS[match]}" | median) (rounds: ${RATIOS[match]})"
kill "$SERVER" 2> /dev/null
SERVER=

# perflab's trace monitor in the same window, empty programs first.
CM=(crosscheck monitors --workloads netrr --monitor-sets trace --monitor-pairs 8 --max-pairs 16)
DB="$WORK/cm.db"
for how in "classic empty" "classic matching" "empty" "matching"; do
    env=()
    case $how in *classic*) env+=(PERFLAB_TRACE_ATTACH=classic) ;; esac
    case $how in *empty*) env+=(PERFLAB_TRACE_EMPTY_PROGRAMS=1) ;; esac
    line=$(env "${env[@]}" "$PERFLAB" --db "$DB" "${CM[@]}" 2> /dev/null | grep '^netrr ')
    echo "perflab trace (${how/classic/all classic,}): $(echo "$line" | awk '{ print "p50 ratio", $8, $9, $10 }')"
done
