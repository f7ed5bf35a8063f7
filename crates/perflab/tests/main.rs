//! The integration tests of this crate, linked as one test binary: each file under
//! tests/ is a module here (cargo would otherwise link every dependency once per
//! file). A new test file needs its `mod` line below; `tests_are_all_linked` in
//! crates/perflab/tests/test_layout.rs fails on one that lacks it.

mod cli_adaptive;
mod cli_bad_input;
mod cli_bisect;
mod cli_compare_design;
mod cli_completions;
mod cli_conventions;
mod cli_crosscheck_verdicts;
mod cli_disturbed;
mod cli_dmatest;
mod cli_dry_run;
mod cli_exec_import;
mod cli_exit_codes;
mod cli_export;
mod cli_fleet;
mod cli_gpuxfer;
mod cli_history;
mod cli_idle_ipi;
mod cli_idle_ipi_trace;
mod cli_idle_ipi_unprivileged;
mod cli_import_hyperfine;
mod cli_import_values;
mod cli_ineffective;
mod cli_irq_fill;
mod cli_json_schema;
mod cli_killed_run;
mod cli_knob_locks;
mod cli_knob_order;
mod cli_kvm_probe;
mod cli_latency_percentiles;
mod cli_limits;
mod cli_live_tools;
mod cli_man;
mod cli_memlock;
mod cli_memxfer;
mod cli_netpaths;
mod cli_parallel;
mod cli_param_validation;
mod cli_perf_memcpy;
mod cli_postgres;
mod cli_push;
mod cli_readonly;
mod cli_report;
mod cli_runs;
mod cli_secrets;
mod cli_serve_auth;
mod cli_spans;
mod cli_stdout_full;
mod cli_sudo;
mod cli_sweep;
mod cli_telemetry_ab;
mod cli_trace;
mod cli_trace_text;
mod cli_until_decided;
mod cli_versions;
mod cli_vm_paths;
mod common;
mod docs_commands;
mod function_length;
mod json_schema;
#[path = "module_cycles/main.rs"]
mod module_cycles;
mod no_hand_built_json;
mod test_layout;
