//! Progress of a run: a bar with ETA on a terminal, a line every few seconds otherwise
//! (CI logs), and notes printed once above either.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use perflab_core::quantity_text::with_units::figure_text;
use perflab_core::ParamRoles;
use perflab_lab::Progress;
use perflab_store::{MeasurementRecord, MeasurementStatus, RunId};

pub struct Reporter {
    bar: Option<ProgressBar>,
    total: u64,
    done: u64,
    started: Instant,
    last_line: Instant,
    metric: String,
    /// Parameters that differ between points: the only ones worth a progress line.
    varying: Vec<String>,
    /// The run's parameter roles, which give each value its unit as the report's rows.
    roles: ParamRoles,
}

impl Reporter {
    pub fn new(metric: &str, varying: Vec<String>, roles: ParamRoles) -> Self {
        Self {
            bar: None,
            total: 0,
            done: 0,
            started: Instant::now(),
            last_line: Instant::now(),
            metric: metric.to_string(),
            varying,
            roles,
        }
    }

    fn eta(&self) -> String {
        let left = self.total.saturating_sub(self.done);
        let spent = self.started.elapsed().as_secs_f64();
        if self.done == 0 {
            return "?".into();
        }
        let secs = spent / self.done as f64 * left as f64;
        format!("{:.0}s", secs)
    }
}

impl Progress for Reporter {
    fn begin(&mut self, run: RunId, total: u64, done: u64) {
        self.total = total;
        self.done = done;
        self.started = Instant::now();
        eprintln!("run {run}: {} of {total} measurements to go", total - done);
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template(
                    "{bar:30.cyan/blue} {pos}/{len} [{elapsed_precise} eta {eta}] {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar.set_position(done);
            self.bar = Some(bar);
        }
        // Measurements that existed before a resume don't tell the rate of this session.
        self.done = 0;
        self.total = total - done;
    }

    fn measured(&mut self, rec: &MeasurementRecord) {
        self.done += 1;
        let what = match &rec.status {
            // An exec run's primary metric is the first its parser reported where the
            // spec could not name it before the first measurement.
            MeasurementStatus::Ok => rec
                .output
                .metric(&self.metric)
                .or_else(|| rec.output.metrics.first())
                .map(|m| format!("{} = {}", m.name, figure_text(m.value, m.unit)))
                .unwrap_or_else(|| "no metric".to_string()),
            MeasurementStatus::Failed(e) => format!("FAILED: {e}"),
            MeasurementStatus::Ineffective(e) => format!("INEFFECTIVE (not counted): {e}"),
            MeasurementStatus::Disturbed(e) => format!("DISTURBED (not counted): {e}"),
        };
        let role = match rec.role {
            perflab_store::Role::Headline => "",
            perflab_store::Role::Telemetry => " (telemetry, not a result)",
        };
        let point: Vec<String> = self
            .varying
            .iter()
            .filter_map(|k| {
                let v = rec.params.get(k)?;
                // In its role's unit (`size=64 KiB`), as the report's rows name the point.
                Some(self.roles.named_value(k, v))
            })
            .collect();
        let line = format!(
            "{} [{}] rep {}{role}: {what}",
            point.join(" "),
            rec.variant,
            rec.rep
        );
        if let Some(bar) = &self.bar {
            bar.inc(1);
            bar.set_message(line);
        } else if self.last_line.elapsed() > Duration::from_secs(5) || self.done == self.total {
            eprintln!("  {}/{} eta {}  {line}", self.done, self.total, self.eta());
            self.last_line = Instant::now();
        }
    }

    fn note(&mut self, message: &str) {
        match &self.bar {
            Some(bar) => bar.println(format!("note: {message}")),
            None => eprintln!("note: {message}"),
        }
    }

    fn end(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
