//! The manual's ENVIRONMENT and FILES: every variable perflab reads (or sets for a
//! command it runs) and every file it keeps. `man_pages_are_complete` in
//! tests/cli_man.rs finds the variables in the sources and fails on one missing here.

/// (variable, what it does).
pub const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "PERFLAB_DB",
        "The results database when --db is not given: an SQLite file or a \
         postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE URL.",
    ),
    (
        "PERFLAB_JOURNAL",
        "The knob journal (the original values of every setting a run changes) when \
         --journal is not given.",
    ),
    (
        "PERFLAB_WAIT_LOCK",
        "run --wait-lock's default: how long to wait for another perflab that holds a \
         setting the run changes (e.g. 10m).",
    ),
    (
        "PERFLAB_DISTURBED_ABOVE",
        "run --disturbed-above's default: the share of a measurement's CPUs (in %) other \
         work may take before the measurement is marked disturbed.",
    ),
    (
        "PERFLAB_FINGERPRINT_KEY",
        "The key file secrets (tokens, passwords in URLs) are fingerprinted with before \
         they are stored or shown.",
    ),
    (
        "PERFLAB_SERVE_TOKEN",
        "serve's token, and the token a netrr measurement proves to its peer \
         (-p peer=ADDR:PORT); prefer it, or serve --token-file, to a token on the command \
         line.",
    ),
    (
        "PERFLAB_SSH",
        "The ssh program the fleet commands run (default: ssh).",
    ),
    (
        "PERFLAB_LIBCUDA",
        "The CUDA driver library the gpu workloads load instead of libcuda.so.1.",
    ),
    (
        "PERFLAB_GUEST_KERNEL",
        "run --guest-kernel's default: the kernel image the vm-* network paths boot.",
    ),
    (
        "PERFLAB_GUEST_ACCEL",
        "kvm or tcg: the guests' accelerator, chosen without the KVM probe.",
    ),
    (
        "PERFLAB_GUEST_BOOT_TIMEOUT",
        "Seconds a guest may take to boot and start serving.",
    ),
    (
        "PERFLAB_GUEST_BINARY",
        "The perflab binary put into the guests (default: this one).",
    ),
    (
        "PERFLAB_VFIO_NIC",
        "netpath=vm-vfio: the PCI address of a NIC bound to vfio-pci, given to the guest.",
    ),
    (
        "PERFLAB_VFIO_PEER",
        "netpath=vm-vfio: the host interface on the same wire as PERFLAB_VFIO_NIC, with no \
         address.",
    ),
    (
        "PERFLAB_VFIO_MODULE",
        "netpath=vm-vfio: the guest kernel module of the NIC's driver, where it is a module \
         (e.g. igc).",
    ),
    (
        "PERFLAB_TRACE_BACKEND",
        "bpf or text: the trace monitor's backend, instead of BPF where it can be used.",
    ),
    (
        "PERFLAB_TRACE_ATTACH",
        "classic or raw: how the trace monitor's BPF programs attach, for kernels where one \
         way misbehaves.",
    ),
    (
        "PERFLAB_TRACE_EVENTS",
        "A diagnostic of crosscheck trace-cost: system:event,... loads only those events' \
         programs, -system:event,... all but those.",
    ),
    (
        "PERFLAB_TRACE_EMPTY_PROGRAMS",
        "A diagnostic: set, every BPF program of the trace monitor does nothing, so what \
         attaching alone costs can be measured.",
    ),
    (
        "PERFLAB_TRACE_CONSTANT_CLOCK",
        "A diagnostic: set, the trace monitor's BPF programs read a constant where they \
         would read the clock (every span 0 ns), so what the clock reads cost can be measured.",
    ),
    (
        "PERFLAB_BPF_LOG",
        "Set, a BPF program the kernel refuses has the verifier's whole log printed.",
    ),
    (
        "PERFLAB_CHECK_ARGS_ONLY",
        "Set, perflab parses its command line and exits 0, or 2 with the error, doing \
         nothing else.",
    ),
    (
        "PERFLAB_BISECT_COMMIT",
        "Set by bisect for its --build command: the commit being built.",
    ),
    (
        "PERFLAB_BISECT_CHILD",
        "Set by bisect on the perflab run it starts: run --resume of that run resumes the \
         run alone, not the whole bisection.",
    ),
    (
        "XDG_DATA_HOME",
        "Where the default database, the fingerprint key and the drill-downs live \
         ($XDG_DATA_HOME/perflab; default ~/.local/share/perflab).",
    ),
    (
        "XDG_STATE_HOME",
        "Where the knob journal of a user other than root and the fleet records live \
         ($XDG_STATE_HOME/perflab; default ~/.local/state/perflab).",
    ),
    (
        "XDG_CACHE_HOME",
        "Where bisect keeps its builds ($XDG_CACHE_HOME/perflab/bisect; default \
         ~/.cache/perflab/bisect).",
    ),
    ("HOME", "The base of the defaults above."),
    (
        "SUDO_USER",
        "Under sudo, the invoking user: their database is used (and files perflab creates \
         there are given to them) unless --db or PERFLAB_DB names another.",
    ),
    (
        "SUDO_UID",
        "Under sudo, the invoking user's uid (default: their passwd entry's).",
    ),
    (
        "SUDO_GID",
        "Under sudo, the invoking user's gid (default: their passwd entry's).",
    ),
];

/// (path, what it holds).
pub const FILES: &[(&str, &str)] = &[
    (
        "~/.local/share/perflab/results.db",
        "The results database (SQLite) unless --db or PERFLAB_DB names another.",
    ),
    (
        "~/.local/share/perflab/drilldown/STUDY-RUN/",
        "The per-pair drill-down of a run (run --out names another directory).",
    ),
    (
        "~/.local/share/perflab/fingerprint.key",
        "The key secrets are fingerprinted with.",
    ),
    (
        "/var/lib/perflab/journal.json",
        "The knob journal of root: every setting changed and not yet restored; perflab \
         restore replays it.",
    ),
    (
        "~/.local/state/perflab/journal.json",
        "The knob journal of another user.",
    ),
    (
        "~/.local/state/perflab/fleets/",
        "One record per fleet run (fleet ls lists them).",
    ),
    (
        "~/.cache/perflab/bisect/",
        "bisect's worktrees and builds, per repository.",
    ),
    (
        "/run/lock/perflab/",
        "Lock files of the settings live runs hold (root; /tmp/perflab-locks-UID for \
         another user).",
    ),
    (
        "/run/perflab/",
        "Guests' files and the trace monitor's private tracefs mounts while a run uses them.",
    ),
];
