//! What can go wrong reading history.

/// A failed read of the store, or a selection that matched nothing.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error(transparent)]
    Store(#[from] perflab_store::StoreError),
    #[error("no series matches {what} (perflab history lists the {count} there are)")]
    NoMatch { what: String, count: usize },
}
