//! One probe per machine need: the typed answer to "does this machine offer X", asked by
//! `perflab doctor` (which renders it as a line, `crate::doctor`) and by the knob, monitor
//! or workload that needs the fact before it runs (which says why it cannot). One answer,
//! so the two can never disagree. Every /proc, /sys and /dev read goes through the
//! [`SysRoot`](crate::SysRoot), so a captured tree answers as its machine did; what only
//! the live machine can say (the effective ids, perf_event_open, bpf()) is `NotChecked`
//! on a tree.

pub mod access;
pub mod bpf;
pub mod cpufreq;
pub mod cpuidle;
pub mod dmatest;
pub mod hugepages;
pub mod ip_tool;
pub mod irq_affinity;
pub mod isolation;
pub mod memlock;
pub mod net_namespaces;
pub mod openvswitch;
pub mod perf_events;
pub mod pm_qos;
pub mod privileges;
pub mod schedstat;
pub mod tools;
pub mod tracefs;
pub mod vhost_net;

pub use access::Access;
pub use pm_qos::{pm_qos, PM_QOS_DEVICE};
pub use vhost_net::{vhost_net, VHOST_NET_DEVICE};
