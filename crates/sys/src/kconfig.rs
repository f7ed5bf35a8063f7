//! The running kernel's build configuration, where the machine exposes it:
//! `/proc/config.gz` (CONFIG_IKCONFIG_PROC) or `/boot/config-<release>`. Isolation checks
//! need it: `nohz_full=` does nothing without CONFIG_NO_HZ_FULL, `rcu_nocbs=` nothing
//! without CONFIG_RCU_NOCB_CPU, and the command line alone cannot tell.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};

use crate::root::SysRoot;

/// `CONFIG_*` symbols and their values (`y`, `m`, a number or a quoted string); symbols
/// written `# CONFIG_X is not set` are kept as `n`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelConfig {
    pub values: BTreeMap<String, String>,
    /// Where it was read from, for messages.
    pub source: String,
}

impl KernelConfig {
    /// Parses a `.config`; lines that are neither assignments nor "is not set" comments
    /// are ignored.
    pub fn parse(reader: impl BufRead, source: &str) -> Self {
        let mut values = BTreeMap::new();
        for line in reader.split(b'\n').map_while(Result::ok) {
            let line = String::from_utf8_lossy(&line);
            let line = line.trim();
            if let Some(sym) = line
                .strip_prefix("# ")
                .and_then(|l| l.strip_suffix(" is not set"))
            {
                if sym.starts_with("CONFIG_") && !sym.contains(' ') {
                    values.insert(sym.to_string(), "n".to_string());
                }
            } else if let Some((k, v)) = line.split_once('=') {
                if k.starts_with("CONFIG_") && !k.contains(' ') {
                    values.insert(k.to_string(), v.to_string());
                }
            }
        }
        Self {
            values,
            source: source.to_string(),
        }
    }

    /// Reads the running kernel's configuration; `None` when the machine exposes none.
    pub fn read(sys: &SysRoot) -> Option<Self> {
        if let Ok(f) = sys.open("proc/config.gz") {
            let gz = flate2::bufread::GzDecoder::new(f);
            let c = Self::parse(BufReader::new(gz), "/proc/config.gz");
            if !c.values.is_empty() {
                return Some(c);
            }
        }
        let release = sys.read_trimmed("proc/sys/kernel/osrelease").ok()?;
        let rel = format!("boot/config-{release}");
        let f = sys.open(&rel).ok()?;
        Some(Self::parse(f, &format!("/{rel}")))
    }

    /// `Some(true)` for `y` or `m`, `Some(false)` when the symbol is unset or absent.
    pub fn enabled(&self, symbol: &str) -> bool {
        matches!(
            self.values.get(symbol).map(String::as_str),
            Some("y") | Some("m")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const TEXT: &str = "\
# Timers subsystem
CONFIG_NO_HZ_COMMON=y
# CONFIG_NO_HZ_FULL is not set
CONFIG_RCU_NOCB_CPU=y
CONFIG_DMATEST=m
CONFIG_LOCALVERSION=\"-rt61\"
garbage line
";

    #[test]
    fn parses_set_unset_and_modules() {
        let c = KernelConfig::parse(TEXT.as_bytes(), "t");
        assert!(c.enabled("CONFIG_RCU_NOCB_CPU"));
        assert!(c.enabled("CONFIG_DMATEST"));
        assert!(!c.enabled("CONFIG_NO_HZ_FULL"));
        assert_eq!(c.values.get("CONFIG_NO_HZ_FULL").unwrap(), "n");
        assert!(!c.enabled("CONFIG_NOT_THERE"));
        assert_eq!(c.values.get("CONFIG_LOCALVERSION").unwrap(), "\"-rt61\"");
        assert_eq!(c.values.len(), 5);
    }

    #[test]
    fn reads_gzip_from_proc_then_boot() {
        let dir = tempfile::tempdir().unwrap();
        let root = SysRoot::at(dir.path());
        assert!(KernelConfig::read(&root).is_none());
        std::fs::create_dir_all(dir.path().join("proc/sys/kernel")).unwrap();
        std::fs::create_dir_all(dir.path().join("boot")).unwrap();
        std::fs::write(
            dir.path().join("proc/sys/kernel/osrelease"),
            "4.9.82-rt61\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("boot/config-4.9.82-rt61"), TEXT).unwrap();
        let c = KernelConfig::read(&root).unwrap();
        assert_eq!(c.source, "/boot/config-4.9.82-rt61");
        let f = std::fs::File::create(dir.path().join("proc/config.gz")).unwrap();
        let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
        gz.write_all(b"CONFIG_NO_HZ_FULL=y\n").unwrap();
        gz.finish().unwrap();
        let c = KernelConfig::read(&root).unwrap();
        assert_eq!(c.source, "/proc/config.gz");
        assert!(c.enabled("CONFIG_NO_HZ_FULL"));
    }
}
