//! The PostgreSQL backend (being written).

use crate::{Location, StoreError};

pub(crate) struct PgBackend;

impl PgBackend {
    pub(crate) fn open(db: Location) -> Result<crate::sqlite::SqliteBackend, StoreError> {
        Err(StoreError::Connect {
            db,
            reason: "PostgreSQL support is not finished yet".into(),
        })
    }
    pub(crate) fn open_existing(db: Location) -> Result<crate::sqlite::SqliteBackend, StoreError> {
        Self::open(db)
    }
}
