//! One line of `perflab doctor`: a capability's verdict, and the need it answers.

use perflab_core::Need;
use serde::Serialize;

/// How much of a capability is there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    Missing,
    /// Present in part, or not checkable here (see the detail).
    Partial,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Missing => "missing",
            Status::Partial => "partial",
        }
    }
}

/// What a line is about: a need plug-ins declare (named by [`Need::check`]), or a fact of
/// the machine no plug-in needs as such (`cpu topology`, `bpf`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line {
    pub name: &'static str,
    pub need: Option<Need>,
}

impl From<Need> for Line {
    fn from(need: Need) -> Self {
        Line {
            name: need.check(),
            need: Some(need),
        }
    }
}

impl From<&'static str> for Line {
    fn from(name: &'static str) -> Self {
        Line { name, need: None }
    }
}

/// One capability's verdict. Every `Missing` or `Partial` carries a hint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Check {
    pub name: String,
    pub status: Status,
    pub detail: String,
    pub hint: Option<String>,
    /// The need the line answers: what `perflab doctor` matches plug-ins' needs with.
    #[serde(skip)]
    pub need: Option<Need>,
}

impl Check {
    fn new(line: Line, status: Status, detail: String, hint: Option<String>) -> Self {
        Self {
            name: line.name.into(),
            status,
            detail,
            hint,
            need: line.need,
        }
    }

    pub fn ok(line: impl Into<Line>, detail: impl Into<String>) -> Self {
        Self::new(line.into(), Status::Ok, detail.into(), None)
    }

    pub fn missing(
        line: impl Into<Line>,
        detail: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        Self::new(
            line.into(),
            Status::Missing,
            detail.into(),
            Some(hint.into()),
        )
    }

    pub fn partial(
        line: impl Into<Line>,
        detail: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        Self::new(
            line.into(),
            Status::Partial,
            detail.into(),
            Some(hint.into()),
        )
    }
}

/// Detail and hint of a live check skipped on a fixture tree.
pub const NOT_CHECKED: &str = "not checked: fixture tree";
pub const RUN_ON_HOST: &str = "run `perflab doctor` on the machine itself";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_need_names_its_line_and_a_fact_has_no_need() {
        let c = Check::ok(Need::PmQos, "writable");
        assert_eq!((c.name.as_str(), c.need), ("pm qos", Some(Need::PmQos)));
        let t = Check::missing("cpu topology", "none", "mount sysfs");
        assert_eq!((t.need, t.hint.as_deref()), (None, Some("mount sysfs")));
        let json = serde_json::to_value(&c).unwrap();
        assert!(json.get("need").is_none(), "{json}");
    }
}
