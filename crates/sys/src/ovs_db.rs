//! Why `ovs-vsctl` could not reach the Open vSwitch database, read from its error text.
//!
//! Both `perflab doctor` and the `ovs` network path ask; a non-root user who cannot open
//! `db.sock` must be told that, not that ovsdb-server is down: starting it again would
//! not help, running as root would.

/// The reason `ovs-vsctl` failed, and what to do, from its stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OvsDbFailure {
    /// The socket exists but this user may not open it (ovsdb-server runs).
    PermissionDenied { socket: Option<String> },
    /// Nothing answers on the socket: ovsdb-server is not running.
    NotRunning,
}

impl OvsDbFailure {
    /// Classifies `ovs-vsctl`'s stderr. Its failures read like
    /// `ovs-vsctl: unix:/var/run/openvswitch/db.sock: database connection failed (Permission denied)`.
    pub fn from_stderr(stderr: &str) -> Self {
        if stderr.contains("Permission denied") || stderr.contains("EACCES") {
            let socket = stderr
                .split_whitespace()
                .find_map(|w| w.strip_prefix("unix:"))
                .map(|s| s.trim_end_matches(':').to_string());
            return OvsDbFailure::PermissionDenied { socket };
        }
        OvsDbFailure::NotRunning
    }

    /// One line for a doctor row or an unavailable variant.
    pub fn reason(&self) -> String {
        match self {
            OvsDbFailure::PermissionDenied { socket } => format!(
                "ovsdb-server runs, but this user may not open its socket {} (permission denied)",
                socket.as_deref().unwrap_or("db.sock")
            ),
            OvsDbFailure::NotRunning => {
                "ovsdb-server is not running (`ovs-vsctl show` fails)".into()
            }
        }
    }

    /// Whether starting the daemons is the remedy (it is not for a permission problem).
    pub fn needs_start(&self) -> bool {
        matches!(self, OvsDbFailure::NotRunning)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_denied_on_the_socket_is_not_a_stopped_daemon() {
        let f = OvsDbFailure::from_stderr(
            "ovs-vsctl: unix:/var/run/openvswitch/db.sock: database connection failed (Permission denied)",
        );
        assert_eq!(
            f,
            OvsDbFailure::PermissionDenied {
                socket: Some("/var/run/openvswitch/db.sock".into())
            }
        );
        assert!(f.reason().contains("permission denied"), "{}", f.reason());
        assert!(f.reason().contains("/var/run/openvswitch/db.sock"));
        assert!(!f.needs_start());
    }

    #[test]
    fn a_missing_socket_means_not_running() {
        let f = OvsDbFailure::from_stderr(
            "ovs-vsctl: unix:/var/run/openvswitch/db.sock: database connection failed (No such file or directory)",
        );
        assert_eq!(f, OvsDbFailure::NotRunning);
        assert!(f.reason().contains("not running"));
        assert!(f.needs_start());
    }
}
