//! Whether the `dmatest` workload can run: a DMA engine with channels, and the dmatest
//! module loaded.

use perflab_core::Need;

use super::check::Check;
use crate::probe::dmatest::dmatest as probe;
use crate::root::SysRoot;

pub(super) fn dmatest(sys: &SysRoot) -> Check {
    const NAME: Need = Need::Dmatest;
    let found = probe(sys);
    let chans = &found.channels;
    if chans.is_empty() {
        return Check::missing(
            NAME,
            "no DMA engine channels (/sys/class/dma is empty or absent): workload dmatest \
             cannot run; xfer's channel model runs on CPU copies everywhere",
            "dmatest needs a DMA engine driver (CONFIG_DMA_ENGINE and the controller's driver)",
        );
    }
    let shown = if chans.len() > 6 {
        format!("{} … {}", chans[..3].join(" "), chans[chans.len() - 1])
    } else {
        chans.join(" ")
    };
    let what = format!("{} DMA channel(s): {shown}", chans.len());
    if !found.module_loaded {
        return Check::partial(
            NAME,
            format!("{what}; the dmatest module is not loaded"),
            "modprobe dmatest (a kernel with CONFIG_DMATEST=m)",
        );
    }
    Check::ok(NAME, format!("{what}; dmatest loaded"))
}
