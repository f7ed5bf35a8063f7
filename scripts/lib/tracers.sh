# The peer tracer of scripts/trace-floor.sh and scripts/trace-cost.sh: bpftrace with
# netrx's host spans, and what it needs to attach at all. Sourced; the caller sets WORK
# (a scratch directory) and TRACER_CPU, and calls tracefs_restore from its exit trap.

# netrx's six host tracepoints.
BT_EVENTS="tracepoint:irq:softirq_raise, tracepoint:irq:softirq_entry, tracepoint:irq:softirq_exit, tracepoint:sched:sched_waking, tracepoint:sched:sched_switch, tracepoint:sock:sock_recv_length"
BT_EMPTY="$BT_EVENTS {}"
# netrx's host spans as bpftrace would write them: raised → softirq, softirq → wake-up,
# woken → running, running → receive; the softirq's exit cancels a wake-up never made.
BT_SPANS='
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

TRACEFS=/sys/kernel/tracing
TRACEFS_MOUNTED=

# bpftrace finds tracepoints only under /sys/kernel/tracing (or debugfs): where tracefs is
# not mounted it refuses every probe, and a row measured then would be of no tracer at all
# (the rows before 2026-12-02 were, on this machine). Mounted for the run, unmounted after.
tracefs_mount() {
    [ -d "$TRACEFS/events" ] && return 0
    mount -t tracefs nodev "$TRACEFS" || { echo "$0: cannot mount tracefs on $TRACEFS" >&2; return 1; }
    TRACEFS_MOUNTED=1
}

tracefs_restore() {
    [ -n "$TRACEFS_MOUNTED" ] && umount "$TRACEFS" && TRACEFS_MOUNTED=
    return 0
}

# bpftrace_start PROGRAM: bpftrace running PROGRAM on TRACER_CPU, its pid in TRACER, once
# it has attached every probe; else its output and status 1 (nothing left running). Its
# warning that it could not raise RLIMIT_MEMLOCK (a container's hard limit) is no failure:
# the kernel charges BPF memory to the cgroup.
bpftrace_start() {
    local log="$WORK/bt.log"
    : > "$log"
    taskset -c "$TRACER_CPU" bpftrace -e "$1" > "$log" 2>&1 &
    TRACER=$!
    for _ in $(seq 300); do
        grep -q '^Attaching [0-9]* probe' "$log" && break
        kill -0 "$TRACER" 2> /dev/null || break
        sleep 0.1
    done
    sleep 0.3
    if ! kill -0 "$TRACER" 2> /dev/null || ! grep -q '^Attaching [0-9]* probe' "$log" ||
        grep -v RLIMIT_MEMLOCK "$log" | grep -q ERROR; then
        echo "$0: bpftrace did not attach; its output:" >&2
        grep -v RLIMIT_MEMLOCK "$log" | head -5 >&2
        kill -INT "$TRACER" 2> /dev/null
        wait "$TRACER" 2> /dev/null
        TRACER=
        return 1
    fi
}

bpftrace_stop() {
    kill -INT "$TRACER" 2> /dev/null
    wait "$TRACER" 2> /dev/null
    TRACER=
}
