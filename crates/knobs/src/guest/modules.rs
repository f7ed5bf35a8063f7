//! The kernel modules the guest loads before its network comes up (virtio-pci and
//! virtio-net are modules in Debian's kernels), in an order `insmod` accepts.
//!
//! `modules.dep` lines read `kernel/drivers/net/virtio_net.ko: dep1.ko dep2.ko …`, the
//! dependencies listed so that loading them from the last to the first works; modules
//! built into the kernel appear in `modules.builtin` instead and need no loading.

use std::collections::{HashMap, HashSet};
use std::io::BufRead;

/// What modules.dep says: each module's path and its dependencies.
#[derive(Debug, Default)]
pub struct ModuleDeps {
    deps: HashMap<String, Vec<String>>,
    /// Module name (`virtio_net`) → path, for the names a person writes.
    by_name: HashMap<String, String>,
    builtin: HashSet<String>,
}

/// `kernel/drivers/net/virtio_net.ko.xz` → `virtio_net` (dashes read as underscores,
/// as the kernel does).
pub fn module_name(path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.split(".ko").next().unwrap_or(file);
    stem.replace('-', "_")
}

impl ModuleDeps {
    /// Parses `modules.dep` and `modules.builtin`. Lines that are not `PATH: DEPS` are
    /// skipped: a foreign file yields modules that cannot be found, never a panic.
    pub fn parse(dep: impl BufRead, builtin: impl BufRead) -> Self {
        let mut me = Self::default();
        for line in dep.lines().map_while(Result::ok) {
            let Some((path, rest)) = line.split_once(':') else {
                continue;
            };
            let path = path.trim();
            if path.is_empty() || path.contains(char::is_whitespace) {
                continue;
            }
            me.by_name.insert(module_name(path), path.to_string());
            me.deps.insert(
                path.to_string(),
                rest.split_whitespace().map(str::to_string).collect(),
            );
        }
        for line in builtin.lines().map_while(Result::ok) {
            let line = line.trim();
            if !line.is_empty() {
                me.builtin.insert(module_name(line));
            }
        }
        me
    }

    /// The module files to load for `wanted`, each after everything it needs, each once.
    /// A wanted module built into the kernel needs nothing; one that is neither a
    /// module nor built in is an error naming it.
    pub fn load_order(&self, wanted: &[&str]) -> Result<Vec<String>, String> {
        let mut order = Vec::new();
        let mut seen = HashSet::new();
        for name in wanted {
            let name = name.replace('-', "_");
            if self.builtin.contains(&name) {
                continue;
            }
            let Some(path) = self.by_name.get(&name) else {
                return Err(format!(
                    "the guest kernel has no module {name} and does not have it built in"
                ));
            };
            self.visit(path, &mut seen, &mut order, 0);
        }
        Ok(order)
    }

    fn visit(&self, path: &str, seen: &mut HashSet<String>, order: &mut Vec<String>, depth: u32) {
        // modules.dep lists each module's whole closure, so depth stays small; the bound
        // only guards against a hand-made cycle.
        if depth > 64 || !seen.insert(path.to_string()) {
            return;
        }
        for dep in self.deps.get(path).into_iter().flatten().rev() {
            self.visit(dep, seen, order, depth + 1);
        }
        order.push(path.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEP: &str = "\
kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio_pci_legacy_dev.ko kernel/drivers/virtio/virtio_pci_modern_dev.ko kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko
kernel/drivers/virtio/virtio.ko: kernel/drivers/virtio/virtio_ring.ko
kernel/drivers/virtio/virtio_ring.ko:
kernel/drivers/virtio/virtio_pci_legacy_dev.ko: kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko
kernel/drivers/virtio/virtio_pci_modern_dev.ko: kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko
kernel/drivers/net/virtio_net.ko: kernel/drivers/net/net_failover.ko kernel/net/core/failover.ko kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko
kernel/drivers/net/net_failover.ko: kernel/net/core/failover.ko
kernel/net/core/failover.ko:
garbage line without colon
";

    fn names(order: &[String]) -> Vec<String> {
        order.iter().map(|p| module_name(p)).collect()
    }

    #[test]
    fn dependencies_load_first_and_once() {
        let deps = ModuleDeps::parse(DEP.as_bytes(), "".as_bytes());
        let order = deps.load_order(&["virtio_pci", "virtio_net"]).unwrap();
        assert_eq!(
            names(&order),
            [
                "virtio_ring",
                "virtio",
                "virtio_pci_modern_dev",
                "virtio_pci_legacy_dev",
                "virtio_pci",
                "failover",
                "net_failover",
                "virtio_net"
            ]
        );
    }

    #[test]
    fn built_in_modules_need_no_loading_and_missing_ones_are_named() {
        let deps = ModuleDeps::parse(
            DEP.as_bytes(),
            "kernel/drivers/virtio/virtio_pci.ko\n".as_bytes(),
        );
        let order = deps.load_order(&["virtio_pci"]).unwrap();
        assert!(order.is_empty(), "{order:?}");
        let e = deps.load_order(&["e1000e"]).unwrap_err();
        assert!(e.contains("e1000e"), "{e}");
    }

    #[test]
    fn compressed_and_dashed_names_are_the_kernels_names() {
        assert_eq!(module_name("kernel/a/virtio-net.ko.xz"), "virtio_net");
        assert_eq!(module_name("x.ko.zst"), "x");
    }

    #[test]
    fn a_cycle_in_a_made_up_file_terminates() {
        let dep = "a.ko: b.ko\nb.ko: a.ko\n";
        let order = ModuleDeps::parse(dep.as_bytes(), "".as_bytes())
            .load_order(&["a"])
            .unwrap();
        assert_eq!(names(&order), ["b", "a"]);
    }
}
