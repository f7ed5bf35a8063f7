//! gpuxfer on a real GPU, through the system's `libcuda.so.1`. Skipped, with the reason,
//! where there is no CUDA driver or no GPU (a test process of its own: the driver is
//! loaded once per process, and the stand-in tests point theirs elsewhere).

use perflab_core::{resolve, MeasureCtx, SysRoot, Workload};
use perflab_workloads::GpuXfer;

#[test]
fn pinned_h2d_on_a_real_gpu_needs_a_gpu() {
    if std::env::var_os("PERFLAB_LIBCUDA").is_some() {
        return perflab_testkit::skip("gpu", "PERFLAB_LIBCUDA names another driver library");
    }
    if let Err(e) = perflab_cuda::Driver::load() {
        return perflab_testkit::skip("gpu", e);
    }
    let info = GpuXfer.info();
    let given = [("backing", "pinned"), ("size", "64M"), ("duration", "50ms")]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let p = resolve(info.name, info.params, &given).unwrap();
    let out = GpuXfer
        .run(&p, &MeasureCtx::new(SysRoot::host(), Vec::new()))
        .unwrap();
    assert!(out.metric("bandwidth_mib_s").unwrap().value > 0.0);
}
