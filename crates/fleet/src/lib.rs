//! Fleet runs: one study on many hosts over the system `ssh`, each host's measurements
//! streamed into one store as they are committed there.
//!
//! This side ([`driver`]) finds or copies perflab on each host ([`provision`]), starts the
//! agent there over ssh ([`connection`]), and stores what the agent streams ([`stream`]).
//! The agent ([`agent`]) starts the study as a detached `perflab run` with its own knobs
//! and journal, so a dropped connection never stops a measurement, and follows the host's
//! database. The fleet's record ([`state`]) lets `fleet resume` pick up where it stopped.

pub mod agent;
pub mod connection;
pub mod doctor;
pub mod driver;
pub mod hosts;
pub mod provision;
pub mod ssh;
pub mod state;
pub mod stream;
