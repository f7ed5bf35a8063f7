//! Kernel interfaces of perflab: the [`SysRoot`] through which every /proc, /sys and /dev
//! access goes, and pure parsers that take readers and never touch the filesystem.

pub mod cmdline;
pub mod cpufreq;
pub mod cpuidle;
pub mod cpulist;
pub mod doctor;
pub mod error;
pub mod hugepages;
pub mod interrupts;
pub mod isolation;
pub mod kconfig;
pub mod lines;
pub mod meminfo;
pub mod ovs_db;
mod percpu_table;
pub mod perf_event;
pub mod probe;
pub mod procstat;
pub mod root;
pub mod sched;
pub mod smaps;
pub mod softirqs;
pub mod task_cpu;
pub mod topology;
pub mod tracefs_mount;

pub use cpulist::{format_cpu_list, parse_cpu_list};
pub use error::{ParseError, SysError};
pub use root::SysRoot;
pub use topology::Topology;
