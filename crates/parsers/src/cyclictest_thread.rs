//! One cyclictest thread's figures, as both the summary lines (`cyclictest`) and the
//! histogram's trailer (`cyclictest_histogram`) give them: in a file of its own so the
//! two readers do not import each other.

pub(crate) const TOOL: &str = "cyclictest";

#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Thread {
    pub id: String,
    pub cycles: f64,
    pub min: f64,
    pub avg: f64,
    pub max: f64,
    pub overflows: Option<f64>,
}
