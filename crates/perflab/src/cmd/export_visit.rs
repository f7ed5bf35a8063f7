//! The store's read of a run's measurements as the exports use it: `export` (JSON and
//! benchstat) and `export_csv` share it, so neither imports the other.

use perflab_store::{MeasurementRecord, RunId, Store, StoreError};

/// [`perflab_store::Store::visit_measurements`] (with every record's telemetry rows, or
/// none) with a visitor whose own error (a write that failed) stops the read and comes
/// back as itself.
pub(super) fn visit<E>(
    store: &Store,
    run: RunId,
    telemetry: bool,
    mut f: impl FnMut(MeasurementRecord) -> Result<(), E>,
) -> anyhow::Result<()>
where
    E: std::error::Error + Send + Sync + 'static,
{
    store
        .visit_measurements(run, &mut |_| telemetry, &mut |m| {
            f(m).map_err(|e| StoreError::Visitor(Box::new(e)))
        })
        .map_err(|e| match e {
            StoreError::Visitor(inner) => anyhow::Error::from_boxed(inner),
            e => e.into(),
        })
}
