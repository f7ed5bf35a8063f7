//! cpuidle: the idle driver, its states, and whether switching a state off takes effect
//! (`cpuidle=` knob, `cpuidle` monitor).

use crate::cpuidle::{self, state_dir, DisableEffect, IdleState};
use crate::{SysRoot, Topology};

/// The idle driver and what it offers, as seen on the first online CPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdleDriver {
    pub driver: String,
    /// The governor, `none` where there is none.
    pub governor: String,
    /// The CPU whose states were read: the first online one.
    pub cpu: u32,
    /// Its states, or why they could not be read.
    pub states: Result<Vec<IdleState>, String>,
    /// Whether every state's `disable` file is writable by this process.
    pub disable_writable: bool,
    /// Whether the driver honours `disable`.
    pub effect: DisableEffect,
}

/// The idle driver, or `None` where the kernel idles without one.
pub fn cpuidle(sys: &SysRoot) -> Option<IdleDriver> {
    let driver = cpuidle::driver(sys)?;
    let governor = cpuidle::governor(sys).unwrap_or_else(|| "none".into());
    let cpu = Topology::read(sys)
        .ok()
        .and_then(|t| t.online.first().copied())
        .unwrap_or(0);
    let states = cpuidle::states(sys, cpu).map_err(|e| e.to_string());
    let disable_writable = states.as_ref().is_ok_and(|states| {
        states
            .iter()
            .all(|s| sys.writable(&format!("{}/disable", state_dir(cpu, s.index))))
    });
    let effect = cpuidle::disable_effect(&driver);
    Some(IdleDriver {
        driver,
        governor,
        cpu,
        states,
        disable_writable,
        effect,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_driver_is_none_and_a_driver_names_its_states() {
        let dir = tempfile::tempdir().unwrap();
        let sys = SysRoot::at(dir.path());
        assert_eq!(cpuidle(&sys), None);
        let put = |rel: &str, text: &str| {
            let p = sys.path(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        put(
            "sys/devices/system/cpu/cpuidle/current_driver",
            "haltpoll\n",
        );
        put("sys/devices/system/cpu/online", "0-1\n");
        let d = cpuidle(&sys).unwrap();
        assert_eq!(
            (d.driver.as_str(), d.governor.as_str(), d.cpu),
            ("haltpoll", "none", 0)
        );
        assert_eq!(d.states, Ok(Vec::new()));
        assert_eq!(d.effect, DisableEffect::Ignored);
    }
}
