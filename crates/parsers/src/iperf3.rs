//! `iperf3 -J` client output. Throughput is reported in bytes/s (bits_per_second / 8):
//! perflab's units have no bits. In reverse mode (-R) the sender is the server.

use perflab_core::descriptor::{Descriptor, Kind, Needs, ReportHints};
use perflab_core::{Better, Metric, Unit};
use serde_json::Value;

use crate::error::ParseError;
use crate::json::{document, f64_at, line_of};
use crate::parsed::{Parsed, ParsedRow};
use crate::text::{bad, metric, not_this};

pub(crate) static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Parser,
    name: "iperf3",
    help: "iperf3 -J client output: sender/receiver throughput, retransmits, UDP jitter \
           and loss; one row per stream with -P",
    params: &[],
    needs: Needs::NONE,
    report: ReportHints::None,
};

const TOOL: &str = "iperf3";

pub(crate) fn parse(text: &str) -> Result<Parsed, ParseError> {
    let (doc, first_line) = document(text, TOOL, "\"intervals\"")?;
    let is_iperf = doc
        .pointer("/start/version")
        .and_then(Value::as_str)
        .is_some_and(|v| v.starts_with("iperf"))
        || (doc.get("start").is_some() && doc.get("intervals").is_some());
    if !is_iperf {
        return Err(not_this(TOOL, "the JSON has no start.version \"iperf …\""));
    }
    if let Some(e) = doc.get("error").and_then(Value::as_str) {
        return Err(bad(
            TOOL,
            line_of(text, "\"error\"", first_line),
            format!("iperf3 failed: {e}"),
        ));
    }
    let end = doc
        .get("end")
        .ok_or_else(|| bad(TOOL, first_line, "no \"end\" section"))?;
    let udp = doc
        .pointer("/start/test_start/protocol")
        .and_then(Value::as_str)
        == Some("UDP");
    let mut out = Parsed {
        metrics: throughput(text, end, first_line)?,
        ..Parsed::default()
    };
    let m = &mut out.metrics;
    if let Some(r) = f64_at(end, &["sum_sent", "retransmits"]) {
        m.push(metric("retransmits", r, Unit::Count, Better::Lower));
    }
    if udp {
        // The receiver's view: jitter and loss are measured where the packets arrive.
        let sum = end.get("sum_received").or_else(|| end.get("sum"));
        if let Some(sum) = sum {
            udp_metrics(m, sum);
        }
        // The loss is a share of the packets sent.
        if let Some(lost) = m.iter().find(|x| x.name == "lost_pct") {
            let line = line_of(text, "\"lost_percent\"", first_line);
            crate::plausible::share(TOOL, line, "lost_pct", lost.value)?;
        }
    }
    for (key, name) in [
        ("host_total", "host_cpu_pct"),
        ("remote_total", "remote_cpu_pct"),
    ] {
        if let Some(v) = f64_at(end, &["cpu_utilization_percent", key]) {
            m.push(metric(name, v, Unit::Percent, Better::Neither));
        }
    }
    if doc
        .pointer("/start/test_start/reverse")
        .and_then(Value::as_i64)
        == Some(1)
    {
        out.notes
            .push("iperf3 ran in reverse (-R): the server sent, the client received".into());
    }
    add_streams(&mut out, end);
    Ok(out)
}

/// Sender and receiver throughput (and bytes), from the end sums.
fn throughput(text: &str, end: &Value, first_line: usize) -> Result<Vec<Metric>, ParseError> {
    let mut m = Vec::new();
    for (side, key) in [("sender", "sum_sent"), ("receiver", "sum_received")] {
        let Some(sum) = end.get(key) else { continue };
        let bps = f64_at(sum, &["bits_per_second"]).ok_or_else(|| {
            bad(
                TOOL,
                line_of(text, key, first_line),
                format!("{key} has no bits_per_second"),
            )
        })?;
        m.push(metric(
            format!("{side}_bytes_s"),
            bps / 8.0,
            Unit::BytesPerSecond,
            Better::Higher,
        ));
        if let Some(b) = f64_at(sum, &["bytes"]) {
            m.push(metric(
                format!("{side}_bytes"),
                b,
                Unit::Bytes,
                Better::Neither,
            ));
        }
    }
    if m.is_empty() {
        return Err(bad(
            TOOL,
            line_of(text, "\"end\"", first_line),
            "no sum_sent or sum_received: the test did not finish",
        ));
    }
    Ok(m)
}

/// Per-stream figures: one stream adds its round trip times, several become rows.
fn add_streams(out: &mut Parsed, end: &Value) {
    let streams: Vec<(String, Vec<Metric>)> = end
        .get("streams")
        .and_then(Value::as_array)
        .map(|s| s.iter().enumerate().map(|(i, s)| stream(i, s)).collect())
        .unwrap_or_default();
    match streams.len() {
        0 => {}
        // One stream is the sums; only what the sums lack (TCP round trip times) is added.
        1 => {
            if let Some((_, sm)) = streams.into_iter().next() {
                let rtt = sm.into_iter().filter(|x| x.name.starts_with("rtt_"));
                out.metrics.extend(rtt);
            }
        }
        _ => {
            out.rows = streams
                .into_iter()
                .map(|(socket, metrics)| ParsedRow {
                    histograms: Vec::new(),
                    telemetry: Vec::new(),
                    params: vec![("stream".to_string(), socket)],
                    series: None,
                    metrics,
                })
                .collect();
        }
    }
}

fn udp_metrics(m: &mut Vec<Metric>, sum: &Value) {
    if let Some(v) = f64_at(sum, &["jitter_ms"]) {
        m.push(metric("jitter_ms", v, Unit::Milliseconds, Better::Lower));
    }
    if let Some(v) = f64_at(sum, &["lost_packets"]) {
        m.push(metric("lost_packets", v, Unit::Count, Better::Lower));
    }
    if let Some(v) = f64_at(sum, &["lost_percent"]) {
        m.push(metric("lost_pct", v, Unit::Percent, Better::Lower));
    }
    if let Some(v) = f64_at(sum, &["packets"]) {
        m.push(metric("packets", v, Unit::Count, Better::Neither));
    }
}

/// One stream: its socket number and its figures.
fn stream(i: usize, s: &Value) -> (String, Vec<Metric>) {
    let mut m = Vec::new();
    let socket = ["sender", "receiver", "udp"]
        .iter()
        .find_map(|k| f64_at(s, &[k, "socket"]))
        .map_or_else(|| i.to_string(), |v| v.to_string());
    for side in ["sender", "receiver"] {
        if let Some(bps) = f64_at(s, &[side, "bits_per_second"]) {
            m.push(metric(
                format!("{side}_bytes_s"),
                bps / 8.0,
                Unit::BytesPerSecond,
                Better::Higher,
            ));
        }
    }
    if let Some(r) = f64_at(s, &["sender", "retransmits"]) {
        m.push(metric("retransmits", r, Unit::Count, Better::Lower));
    }
    // The sender's kernel measures round trips; a client that only received (-R) has
    // zeros there, which are not measurements.
    let rtt_measured = f64_at(s, &["sender", "max_rtt"]).is_some_and(|v| v > 0.0);
    for (key, name) in [
        ("mean_rtt", "rtt_mean_us"),
        ("min_rtt", "rtt_min_us"),
        ("max_rtt", "rtt_max_us"),
    ] {
        if let Some(v) = f64_at(s, &["sender", key]).filter(|_| rtt_measured) {
            m.push(metric(name, v, Unit::Microseconds, Better::Lower));
        }
    }
    if let Some(u) = s.get("udp") {
        if let Some(bps) = f64_at(u, &["bits_per_second"]) {
            m.push(metric(
                "sender_bytes_s",
                bps / 8.0,
                Unit::BytesPerSecond,
                Better::Higher,
            ));
        }
        udp_metrics(&mut m, u);
    }
    (socket, m)
}
