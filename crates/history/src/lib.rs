//! History: one figure of one study, point and variant on one machine, over the runs a
//! store holds, with the change points where it moved (`perflab history`).
//!
//! - [`series`]: the series a store holds ([`extract`]), each run reduced to the median
//!   of its repetitions, ordered by the run's time, with the run's label and kernel.
//! - [`analyse`]: change points by [`perflab_stats::changepoint::e_divisive`] over the
//!   run medians, and for each the runs either side, the medians before and after, and
//!   the change with its interval and verdict from [`perflab_stats::compare`].
//! - [`events`]: the change points of many series that moved at the same run, as one
//!   event (a kernel change moving 30 CPU pairs is one event).
//! - [`view`]: the sections `perflab history` prints, in every format.
//!
//! The detector and the series are a library API so that other commands (a bisection
//! looking for the run a figure moved at) use the same ones.

pub mod analyse;
pub mod error;
pub mod events;
pub mod series;
pub mod view;

pub use analyse::{analyse, Change, HistoryConfig, RunRef, SeriesHistory};
pub use error::HistoryError;
pub use events::{events, Event};
pub use series::{extract, Filter, Series, SeriesKey, SeriesPoint};
