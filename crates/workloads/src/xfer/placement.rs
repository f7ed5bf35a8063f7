//! Where the threads of the channel model run: `free` (the scheduler decides), `spread`
//! (pinned round-robin over the CPUs this process may use), `isolated` (pinned
//! round-robin over the kernel's isolated CPUs) or an explicit CPU list (`0,2-3`).
//!
//! More pinned threads than CPUs is legal and wraps round-robin: the verdict then shows
//! the sharing. A listed CPU that is offline, or that this process may not use, is an
//! error before any thread starts. Isolated CPUs are accepted in a list although they are
//! usually outside the inherited affinity (`isolcpus=` takes them out of init's mask):
//! pinning to them is the point of isolating them.

use perflab_sys::{format_cpu_list, parse_cpu_list};

/// A placement as the user wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    Free,
    Spread,
    Isolated,
    List(Vec<u32>),
}

impl Placement {
    /// Parses `free`, `spread`, `isolated` or a CPU list.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim() {
            "free" | "" => Ok(Placement::Free),
            "spread" => Ok(Placement::Spread),
            "isolated" => Ok(Placement::Isolated),
            list => match parse_cpu_list(list) {
                Ok(cpus) if !cpus.is_empty() => Ok(Placement::List(cpus)),
                _ => Err(format!(
                    "placement {list:?} is not free, spread, isolated or a CPU list such as \
                     0,2-3"
                )),
            },
        }
    }

    pub fn is_free(&self) -> bool {
        *self == Placement::Free
    }

    /// The CPU of each of `threads` threads (`None`: not pinned), given what this
    /// machine and process allow.
    pub fn assign(&self, threads: usize, cpus: &CpuSets) -> Result<Vec<Option<u32>>, String> {
        let pool: Vec<u32> = match self {
            Placement::Free => return Ok(vec![None; threads]),
            Placement::Spread => {
                let usable: Vec<u32> = cpus
                    .allowed
                    .iter()
                    .copied()
                    .filter(|c| cpus.online.contains(c))
                    .collect();
                if usable.is_empty() {
                    return Err(format!(
                        "placement=spread: none of this process's allowed CPUs ({}) is online \
                         ({})",
                        format_cpu_list(&cpus.allowed),
                        format_cpu_list(&cpus.online)
                    ));
                }
                usable
            }
            Placement::Isolated => {
                let iso: Vec<u32> = cpus
                    .isolated
                    .iter()
                    .copied()
                    .filter(|c| cpus.online.contains(c))
                    .collect();
                if iso.is_empty() {
                    return Err(
                        "placement=isolated: this machine has no online isolated CPUs (boot \
                         with isolcpus=<cpus> nohz_full=<cpus> rcu_nocbs=<cpus>; see \
                         `perflab doctor`)"
                            .into(),
                    );
                }
                iso
            }
            Placement::List(list) => {
                for &c in list {
                    if !cpus.online.contains(&c) {
                        return Err(format!(
                            "placement: CPU {c} is not online (online: {})",
                            format_cpu_list(&cpus.online)
                        ));
                    }
                    if !cpus.allowed.contains(&c) && !cpus.isolated.contains(&c) {
                        return Err(format!(
                            "placement: CPU {c} is outside the CPUs this process may use ({}); \
                             see `taskset -p $$` or its cpuset",
                            format_cpu_list(&cpus.allowed)
                        ));
                    }
                }
                list.clone()
            }
        };
        Ok((0..threads).map(|i| Some(pool[i % pool.len()])).collect())
    }
}

/// The CPU sets a placement is resolved against.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuSets {
    pub online: Vec<u32>,
    /// The calling thread's affinity (what its children inherit).
    pub allowed: Vec<u32>,
    /// The kernel's isolated CPUs.
    pub isolated: Vec<u32>,
}

/// The calling thread's CPU affinity.
pub fn allowed_cpus() -> Result<Vec<u32>, String> {
    let set = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0))
        .map_err(|e| format!("sched_getaffinity: {e}"))?;
    Ok((0..nix::sched::CpuSet::count())
        .filter(|&c| set.is_set(c).unwrap_or(false))
        .map(|c| c as u32)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sets() -> CpuSets {
        CpuSets {
            online: vec![0, 1, 2, 3],
            allowed: vec![0, 1, 2],
            isolated: vec![3],
        }
    }

    #[test]
    fn parses_the_four_forms() {
        assert_eq!(Placement::parse("free").unwrap(), Placement::Free);
        assert_eq!(Placement::parse("spread").unwrap(), Placement::Spread);
        assert_eq!(Placement::parse("isolated").unwrap(), Placement::Isolated);
        assert_eq!(
            Placement::parse("0,2-3").unwrap(),
            Placement::List(vec![0, 2, 3])
        );
        let e = Placement::parse("everywhere").unwrap_err();
        assert!(e.contains("free, spread, isolated"), "{e}");
        assert!(Placement::parse("3-1").is_err());
    }

    #[test]
    fn pinned_modes_wrap_round_robin() {
        let s = sets();
        assert_eq!(Placement::Free.assign(2, &s).unwrap(), vec![None, None]);
        assert_eq!(
            Placement::Spread.assign(5, &s).unwrap(),
            vec![Some(0), Some(1), Some(2), Some(0), Some(1)]
        );
        assert_eq!(
            Placement::Isolated.assign(2, &s).unwrap(),
            vec![Some(3), Some(3)]
        );
        assert_eq!(
            Placement::List(vec![1]).assign(4, &s).unwrap(),
            vec![Some(1); 4]
        );
        // An isolated CPU may be listed although it is outside the inherited affinity.
        assert!(Placement::List(vec![3]).assign(1, &s).is_ok());
    }

    #[test]
    fn offline_and_forbidden_cpus_are_named() {
        let mut s = sets();
        let e = Placement::List(vec![0, 7]).assign(2, &s).unwrap_err();
        assert_eq!(e, "placement: CPU 7 is not online (online: 0-3)");
        s.isolated.clear();
        let e = Placement::List(vec![3]).assign(1, &s).unwrap_err();
        assert!(
            e.contains("CPU 3 is outside the CPUs this process may use (0-2)"),
            "{e}"
        );
        let e = Placement::Isolated.assign(1, &s).unwrap_err();
        assert!(e.contains("no online isolated CPUs"), "{e}");
        s.allowed = vec![9];
        assert!(Placement::Spread
            .assign(1, &s)
            .unwrap_err()
            .contains("none of"));
    }

    #[test]
    fn this_thread_has_an_affinity() {
        let a = allowed_cpus().unwrap();
        assert!(!a.is_empty());
    }
}
