//! The integration tests of this crate, linked as one test binary: each file under
//! tests/ is a module here (cargo would otherwise link every dependency once per
//! file). A new test file needs its `mod` line below; `tests_are_all_linked` in
//! crates/perflab/tests/test_layout.rs fails on one that lacks it.

#[macro_use]
mod common;
mod append;
mod concurrent;
mod copy;
mod create_race;
mod open;
mod open_pg;
mod perf;
mod readonly;
mod roundtrip;
mod streamed;
mod visit;
