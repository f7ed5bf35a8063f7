//! The kernel's DMA engine test (`dmatest` workload): DMA channels, and the dmatest
//! module loaded.

use crate::SysRoot;

/// The DMA channels, relative to the root.
pub const DMA_CLASS: &str = "sys/class/dma";
/// The dmatest module's parameters, there only while it is loaded.
pub const PARAMS_DIR: &str = "sys/module/dmatest/parameters";

/// What dmatest would have to work with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dmatest {
    /// The DMA channels (`dma0chan0`, …), sorted; empty without a DMA engine.
    pub channels: Vec<String>,
    pub module_loaded: bool,
}

pub fn dmatest(sys: &SysRoot) -> Dmatest {
    let mut channels = sys.list_dir(DMA_CLASS).unwrap_or_default();
    channels.sort();
    Dmatest {
        channels,
        module_loaded: sys.exists(PARAMS_DIR),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channels_are_sorted_and_the_module_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let sys = SysRoot::at(dir.path());
        assert_eq!(dmatest(&sys), Dmatest::default());
        for rel in [
            "sys/class/dma/dma1chan0",
            "sys/class/dma/dma0chan0",
            PARAMS_DIR,
        ] {
            std::fs::create_dir_all(sys.path(rel)).unwrap();
        }
        let d = dmatest(&sys);
        assert_eq!(d.channels, ["dma0chan0", "dma1chan0"]);
        assert!(d.module_loaded);
    }
}
