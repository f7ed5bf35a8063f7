//! Parsers of the output of benchmark tools perflab wraps (`exec`) or imports: each a pure
//! function from text to metrics, tested on output captured from the real tool.
//!
//! Shape of a result: output that holds one measurement puts its figures in
//! [`Parsed::metrics`] and leaves `rows` empty. Output that holds several (fio jobs,
//! hyperfine commands, cyclictest threads, the rows of a scan table) gives one
//! [`ParsedRow`] each, and `metrics` then carries only figures that summarise all of them,
//! where such a figure means something (cyclictest's overall maximum latency does; a sum
//! of fio jobs' bandwidths would only if the jobs ran at the same time, which the output
//! does not say).

use perflab_core::{Descriptor, ParamRoles, Registered, Registry};

mod cyclictest;
mod cyclictest_histogram;
mod cyclictest_thread;
mod dmatest;
pub mod dmatest_log;
mod error;
mod fio;
mod hyperfine;
mod iperf3;
mod json;
mod parsed;
mod perf_bench;
mod perf_stat;
mod perf_stat_csv;
mod perf_stat_line;
mod perf_stat_runs;
mod perf_stat_text;
mod plausible;
mod seed_scan;
mod sockperf;
mod text;

pub use error::ParseError;
pub use parsed::{Parsed, ParsedRow, ParsedSummary};

/// A parser in the registry: its descriptor (declared in its own file) and the function.
/// It reads as its descriptor (`p.name`, `p.help`).
pub struct ParserInfo {
    pub descriptor: &'static Descriptor,
    pub parse: fn(&str) -> Result<Parsed, ParseError>,
    /// The roles of the parameters its rows carry (a scan's size axis), the same for every
    /// file: stored with each run it imports, and read for runs imported before that.
    pub roles: fn() -> ParamRoles,
}

impl ParserInfo {
    /// Parses `text` and refuses a result holding a figure its unit says cannot be: the
    /// way every caller that keeps the figures (import, exec) reads a tool's output.
    pub fn read(&self, text: &str) -> Result<Parsed, ParseError> {
        let parsed = (self.parse)(text)?;
        plausible::check(self.descriptor.name, &parsed)?;
        Ok(parsed)
    }
}

impl Registered for ParserInfo {
    fn descriptor(&self) -> &'static Descriptor {
        self.descriptor
    }
}

impl std::ops::Deref for ParserInfo {
    type Target = Descriptor;

    fn deref(&self) -> &Descriptor {
        self.descriptor
    }
}

// One line per parser, in the order `perflab list` shows them.
#[rustfmt::skip]
static REGISTRY: Registry<ParserInfo> = Registry::new(&[
    ParserInfo { descriptor: &perf_stat::DESCRIPTOR, parse: perf_stat::parse, roles: ParamRoles::default },
    ParserInfo { descriptor: &sockperf::DESCRIPTOR, parse: sockperf::parse, roles: ParamRoles::default },
    ParserInfo { descriptor: &fio::DESCRIPTOR, parse: fio::parse, roles: ParamRoles::default },
    ParserInfo { descriptor: &iperf3::DESCRIPTOR, parse: iperf3::parse, roles: ParamRoles::default },
    ParserInfo { descriptor: &cyclictest::DESCRIPTOR, parse: cyclictest::parse, roles: ParamRoles::default },
    ParserInfo { descriptor: &hyperfine::DESCRIPTOR, parse: hyperfine::parse, roles: ParamRoles::default },
    ParserInfo { descriptor: &perf_bench::DESCRIPTOR, parse: perf_bench::parse, roles: ParamRoles::default },
    ParserInfo { descriptor: &dmatest::DESCRIPTOR, parse: dmatest::parse, roles: ParamRoles::default },
    ParserInfo { descriptor: &seed_scan::DESCRIPTOR, parse: seed_scan::parse, roles: seed_scan::param_roles },
]);

/// `perf bench` output in the default format, for callers that know what they ran.
pub fn parse_perf_bench(text: &str) -> Result<Parsed, ParseError> {
    perf_bench::parse(text)
}

/// Every built-in parser.
pub fn registry() -> &'static [ParserInfo] {
    REGISTRY.entries()
}

pub fn names() -> Vec<&'static str> {
    REGISTRY.names()
}

pub fn by_name(name: &str) -> Option<&'static ParserInfo> {
    REGISTRY.get(name)
}

/// The roles the parser called `name` gives its parameters; none for a parser this
/// program does not have. Installed as [`perflab_core::catalog::import_roles`].
pub fn param_roles(name: &str) -> ParamRoles {
    by_name(name).map_or_else(ParamRoles::default, |p| (p.roles)())
}
