//! `/proc/<pid>/task/<tid>/sched`, parsed in `perflab_core`, whose thread records read
//! each thread's migrations.

pub use perflab_core::sched::parse_nr_migrations;
