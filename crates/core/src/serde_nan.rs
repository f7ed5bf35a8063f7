//! JSON has no NaN: serde_json writes a NaN float as `null`, and would then refuse to read
//! that `null` back into an `f64`. Results carry NaN where a figure is undefined (the mean of
//! an empty histogram, a start time nobody recorded), and exports are read back (`import
//! --parser perflab-json`, fleet streams), so every such field reads `null` as NaN.

use serde::{Deserialize, Deserializer};

/// `#[serde(deserialize_with = "crate::serde_nan::f64_or_nan")]`: a number, or `null` as NaN.
pub fn f64_or_nan<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    #[derive(Debug, Serialize, Deserialize)]
    struct T {
        #[serde(deserialize_with = "super::f64_or_nan")]
        v: f64,
    }

    #[test]
    fn nan_survives_a_json_round_trip() {
        let text = serde_json::to_string(&T { v: f64::NAN }).unwrap();
        assert_eq!(text, r#"{"v":null}"#);
        let back: T = serde_json::from_str(&text).unwrap();
        assert!(back.v.is_nan());
        let back: T = serde_json::from_str(r#"{"v":2.5}"#).unwrap();
        assert_eq!(back.v, 2.5);
        assert!(serde_json::from_str::<T>(r#"{"v":"x"}"#).is_err());
    }

    #[test]
    fn an_empty_histogram_reads_back_with_its_nans() {
        let h = crate::output::HistogramData {
            name: "rtt".into(),
            unit: crate::units::Unit::Microseconds,
            count: 0,
            min: f64::NAN,
            mean: f64::NAN,
            max: f64::NAN,
            stddev: f64::NAN,
            p50: 1.0,
            p90: f64::NAN,
            p99: f64::NAN,
            p999: f64::NAN,
            p9999: f64::NAN,
            encoded: Vec::new(),
            above: None,
        };
        let back: crate::output::HistogramData =
            serde_json::from_str(&serde_json::to_string(&h).unwrap()).unwrap();
        assert!(back.mean.is_nan() && back.p9999.is_nan());
        assert_eq!(back.p50, 1.0);
    }
}
