//! The one shape of a plug-in registry: a static list of entries, one line per plug-in,
//! each of which knows its [`Descriptor`] (declared in the plug-in's own file). Workloads,
//! monitors, knobs and parsers each list theirs in a `Registry` of their entry type;
//! names, look-up by name and the "known: …" of an error derive from it, the same way
//! for every kind.

use crate::{Descriptor, Workload};

/// What a registry entry must say about its plug-in.
pub trait Registered: Sync + 'static {
    fn descriptor(&self) -> &'static Descriptor;
}

/// A kind's plug-ins, in the order `perflab list` shows them.
pub struct Registry<E: 'static> {
    entries: &'static [E],
}

impl<E: Registered> Registry<E> {
    pub const fn new(entries: &'static [E]) -> Self {
        Self { entries }
    }

    /// Every entry, in registry order.
    pub fn entries(&self) -> &'static [E] {
        self.entries
    }

    /// The entry whose plug-in is called `name`.
    pub fn get(&self, name: &str) -> Option<&'static E> {
        self.entries.iter().find(|e| e.descriptor().name == name)
    }

    /// Every plug-in's descriptor, in registry order.
    pub fn descriptors(&self) -> impl Iterator<Item = &'static Descriptor> {
        self.entries.iter().map(Registered::descriptor)
    }

    /// Every plug-in's name, in registry order.
    pub fn names(&self) -> Vec<&'static str> {
        self.descriptors().map(|d| d.name).collect()
    }

    /// The names, comma-separated, for an error about a name no plug-in has.
    pub fn known(&self) -> String {
        self.names().join(", ")
    }
}

/// A workload is its own entry: its descriptor is its `info()`.
impl Registered for &'static dyn Workload {
    fn descriptor(&self) -> &'static Descriptor {
        self.info()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Kind, Needs, ReportHints};

    struct Entry(&'static Descriptor);

    impl Registered for Entry {
        fn descriptor(&self) -> &'static Descriptor {
            self.0
        }
    }

    const fn plugin(name: &'static str) -> Descriptor {
        Descriptor {
            kind: Kind::Monitor,
            name,
            help: "",
            params: &[],
            needs: Needs::NONE,
            report: ReportHints::None,
        }
    }

    static A: Descriptor = plugin("a");
    static B: Descriptor = plugin("b");
    static REGISTRY: Registry<Entry> = Registry::new(&[Entry(&A), Entry(&B)]);

    #[test]
    fn names_look_up_and_known_come_from_the_entries_in_order() {
        assert_eq!(REGISTRY.names(), ["a", "b"]);
        assert_eq!(REGISTRY.get("b").map(|e| e.0.name), Some("b"));
        assert!(REGISTRY.get("c").is_none());
        assert_eq!(REGISTRY.known(), "a, b");
        assert_eq!(REGISTRY.entries().len(), 2);
    }
}
