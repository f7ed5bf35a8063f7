#!/bin/bash
# What each of perflab's trace programs costs per run, in the kernel's own BPF statistics:
# `kernel.bpf_stats_enabled=1` (set for the run, restored after), each program's
# run_time_ns and run_cnt read from perflab's fdinfo before and after a sockperf
# ping-pong (client and server on CPU 0, 64-byte messages, SECONDS long), for
#
#   empty   every program `r0 = 0; exit` (PERFLAB_TRACE_EMPTY_PROGRAMS=1): the floor,
#           the statistics' own clock reads included
#   noclock the matching programs reading a constant where they read the clock
#           (PERFLAB_TRACE_CONSTANT_CLOCK=1): match less noclock is what the clock reads
#           cost, noclock less empty what the rest of the matching does
#   match   the matching programs, as shipped
#
#   before  with BEFORE=PATH/TO/other/perflab: that build's matching programs
#   bt-empty, bt-spans  where bpftrace is installed (PEER=none leaves it out): the peer
#           tracer, empty probes on netrx's six host tracepoints and netrx's host spans
#           as hist()s (scripts/lib/tracers.sh), its programs' time summed, as bpftrace's
#           classic tracepoint programs have no link to name their event by
#
# rounds alternating them (ROUNDS of each). Per event: runs per round trip and ns per
# run, each round's figure, then the median's matching minus empty. Far less noisy than
# a round trip's time on a shared machine: it counts the programs' own time only, not
# what the machine does around them. A program's ns per run is an average over what its
# event does, so compare rows whose runs per round trip agree (other tasks switching on
# CPU 0 add cheap, unmatched runs of sched_switch and sched_waking).
#
#   [BEFORE=PATH] scripts/trace-cost.sh PATH/TO/perflab [ROUNDS] [SECONDS] [SET]
#   (root; sockperf, python3)
#
# SET is the span set (netrx). perflab holds its programs attached as in
# scripts/trace-floor.sh: `perflab run --workload exec --monitors trace:SET` whose
# telemetry repetition blocks on a FIFO while this script measures. Each program's event
# is read from its link's fdinfo (tp_name); a classic tracepoint program (no link) shows
# as `prog N`.
set -u
PERFLAB=${1:?usage: trace-cost.sh PATH/TO/perflab [ROUNDS] [SECONDS] [SET]}
ROUNDS=${2:-3}
SECS=${3:-3}
SET=${4:-netrx}
PORT=11312
for t in sockperf taskset python3; do
    command -v $t > /dev/null || { echo "trace-cost: $t is missing" >&2; exit 2; }
done
. "$(dirname "$0")/lib/tracers.sh"
PEERS=
if [ "${PEER:-bpftrace}" != none ]; then
    if command -v bpftrace > /dev/null; then
        PEERS="bt-empty bt-spans"
    else
        echo "trace-cost: bpftrace is not installed: no peer rows (apt-get install bpftrace)" >&2
    fi
fi
[ -x "$PERFLAB" ] || { echo "trace-cost: $PERFLAB is not an executable" >&2; exit 2; }
case $ROUNDS$SECS in '' | *[!0-9]*) echo "trace-cost: ROUNDS and SECONDS are numbers" >&2; exit 2 ;; esac
TRACER_CPU=$(($(nproc) - 1))
WORK=$(mktemp -d)
SERVER=
TRACER=
STATS=$(sysctl -n kernel.bpf_stats_enabled)
release() {
    [ -p "$WORK/go" ] && timeout 5 sh -c "echo > '$WORK/go'" 2> /dev/null
    return 0
}
cleanup() {
    [ -n "$TRACER" ] && { release; kill -INT "$TRACER" 2> /dev/null; wait "$TRACER" 2> /dev/null; }
    [ -n "$SERVER" ] && kill "$SERVER" 2> /dev/null
    sysctl -q kernel.bpf_stats_enabled="$STATS"
    tracefs_restore
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
[ -z "$PEERS" ] || tracefs_mount || exit 1
sysctl -q kernel.bpf_stats_enabled=1 || { echo "trace-cost: cannot enable bpf_stats" >&2; exit 2; }
taskset -c 0 sockperf server -i 127.0.0.1 -p $PORT > /dev/null 2>&1 &
SERVER=$!
sleep 0.5

# "prog_id run_time_ns run_cnt event" per program of process $1.
snapshot() {
    python3 - "$1" << 'EOF'
import os, sys
pid = sys.argv[1]
progs, names = {}, {}
d = f"/proc/{pid}/fdinfo"
for fd in os.listdir(d):
    try:
        kv = dict(l.split(":", 1) for l in open(f"{d}/{fd}") if ":" in l)
    except OSError:
        continue
    kv = {k.strip(): v.strip() for k, v in kv.items()}
    if "run_cnt" in kv and "prog_id" in kv:
        progs[kv["prog_id"]] = (kv["run_time_ns"], kv["run_cnt"])
    elif "link_type" in kv and "prog_id" in kv:
        names[kv["prog_id"]] = kv.get("tp_name") or f"btf {kv.get('target_btf_id', '?')}"
for p, (t, c) in sorted(progs.items(), key=lambda x: int(x[0])):
    print(p, t, c, names.get(p, f"prog{p}"))
EOF
}

# perflab holding trace:SET attached (ENV... for it), one ping-pong measured: lines of
# "event runs ns" plus "rtt N" (sockperf's round trips in the window) and "p50 US" (its
# median round trip, µs: sockperf's percentiles are of half a round trip).
measure() {
    rm -f "$WORK/first" "$WORK/ready" "$WORK/go"
    mkfifo "$WORK/go"
    local cmd="[ -e $WORK/first ] || { touch $WORK/first; echo value 1; exit 0; }; \
touch $WORK/ready; read -r _ < $WORK/go; echo value 1"
    local bin=$PERFLAB
    [ "${1:-}" = before ] && { bin=$BEFORE; shift; }
    env "$@" taskset -c $TRACER_CPU "$bin" --db "$WORK/pl.db" run --workload exec \
        -p "cmd=$cmd" -p 'regex=value (\d+)' -p timeout=600s --monitors "trace:$SET" \
        --reps 1 --telemetry-reps 1 > "$WORK/pl.log" 2>&1 &
    TRACER=$!
    for _ in $(seq 300); do [ -e "$WORK/ready" ] && break; sleep 0.1; done
    if [ ! -e "$WORK/ready" ]; then
        echo "trace-cost: perflab's trace monitor did not start: $(tail -3 "$WORK/pl.log")" >&2
        release; wait $TRACER 2> /dev/null; TRACER=; return 1
    fi
    sleep 0.3
    # taskset execs perflab: the same process.
    window "$TRACER"
    release
    wait $TRACER 2> /dev/null
    TRACER=
    report_window
}

# Process $1's programs' statistics around one ping-pong, into $WORK/before, after, rtt.
window() {
    snapshot "$1" > "$WORK/before"
    taskset -c 0 sockperf ping-pong -i 127.0.0.1 -p $PORT -t "$SECS" --msg-size 64 2> /dev/null |
        awk '/Total Run/ { for (i = 1; i <= NF; i++) if ($i ~ /ReceivedMessages=/) { split($i, a, "="); print "rtt", a[2] } }
             /percentile 50.000/ { printf "p50 %.3f\n", 2 * $NF }' > "$WORK/rtt"
    snapshot "$1" > "$WORK/after"
}

# The window's lines: "rtt N", "p50 US", then "event runs ns" per program ($1 set: every
# program summed as one event of that name).
report_window() {
    cat "$WORK/rtt"
    join <(sort "$WORK/before") <(sort "$WORK/after") |
        awk -v one="${1:-}" '{ runs = $6 - $3; t = $5 - $2
            if (one != "") { R += runs; T += t } else if (runs > 0) printf "%s %d %.1f\n", $4, runs, t / runs }
            END { if (one != "" && R > 0) printf "%s %d %.1f\n", one, R, T / R }'
}

# bpftrace running PROGRAM, one ping-pong measured, as measure's lines.
measure_bpftrace() {
    bpftrace_start "$1" || return 1
    window "$TRACER"
    bpftrace_stop
    report_window bpftrace
}

TABLE="$WORK/table"
for r in $(seq "$ROUNDS"); do
    for cfg in empty ${BEFORE:+before} noclock match $PEERS; do
        case $cfg in
            empty) out=$(measure PERFLAB_TRACE_EMPTY_PROGRAMS=1) ;;
            noclock) out=$(measure PERFLAB_TRACE_CONSTANT_CLOCK=1) ;;
            before) out=$(measure before) ;;
            match) out=$(measure) ;;
            bt-empty) out=$(measure_bpftrace "$BT_EMPTY") || exit 1 ;;
            bt-spans) out=$(measure_bpftrace "$BT_SPANS") || exit 1 ;;
        esac
        rtt=$(echo "$out" | awk '$1 == "rtt" { print $2 }')
        p50=$(echo "$out" | awk '$1 == "p50" { print $2 }')
        echo "$cfg $r ${p50:-0}" >> "$WORK/p50"
        echo "$out" | awk -v c=$cfg -v r=$r -v n="${rtt:-0}" '$1 != "rtt" && $1 != "p50" { print c, r, n, $0 }' >> "$TABLE"
    done
done
python3 - "$TABLE" "$WORK/p50" << 'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
events = []
for r in rows:
    if r[3] not in events:
        events.append(r[3])
def cell(cfg, ev):
    return [(float(r[5]), int(r[4]) / max(int(r[2]), 1)) for r in rows if r[0] == cfg and r[3] == ev]
present = lambda c: any(r[0] == c for r in rows)
cfgs = [c for c in ("empty", "before", "noclock", "match") if present(c)]
print("event: per configuration, runs per round trip and ns per run (median [rounds]); "
      "then what matching adds per run over empty")
for ev in events:
    cells = {c: cell(c, ev) for c in cfgs}
    if not all(cells.values()):
        continue
    med = {c: statistics.median(x for x, _ in v) for c, v in cells.items()}
    per = {c: statistics.median(y for _, y in v) for c, v in cells.items()}
    parts = [f"{c} {per[c]:.2f}/rtt {med[c]:.0f} [{' '.join(f'{x:.0f}' for x, _ in cells[c])}]" for c in cfgs]
    added = " ".join(f"{c} {med[c] - med['empty']:+.0f}" for c in cfgs if c != "empty")
    print(f"{ev:<20} " + "  ".join(parts) + f"  | adds: {added}")
# What a configuration adds per round trip over its floor (perflab's empty programs,
# bpftrace's empty probes): per event, its ns per run less the floor's, times its runs per
# round trip, summed. Per run, not per round trip: other tasks' switches and wake-ups on
# CPU 0 add cheap runs that differ from one window to the next. bpftrace's programs are
# one event, "bpftrace".
def adds(cfg, base):
    total = 0.0
    for ev in events:
        v, b = cell(cfg, ev), cell(base, ev)
        if v and b:
            m = statistics.median(x for x, _ in v) - statistics.median(x for x, _ in b)
            total += m * statistics.median(y for _, y in v)
    return total
p50 = statistics.median(float(l.split()[2]) for l in open(sys.argv[2]) if l.split()[0] == "empty")
pct = lambda ns: f"{ns:.0f} ns ({ns / (10 * p50):.1f} %)"
print(f"added per round trip over its own empty programs (% of the empty programs' p50 round trip, {p50:.2f} µs):")
for c in ("before", "noclock", "match"):
    if present(c):
        print(f"  perflab {c:<8} {pct(adds(c, 'empty'))}")
if present("noclock"):
    print(f"  of which the clock reads (match less noclock) {pct(adds('match', 'empty') - adds('noclock', 'empty'))}")
if present("bt-spans") and present("bt-empty"):
    print(f"  bpftrace spans   {pct(adds('bt-spans', 'bt-empty'))}")
EOF
