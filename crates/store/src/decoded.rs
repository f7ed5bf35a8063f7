//! What a streaming read remembers of the rows it has decoded, so that what repeats
//! from measurement to measurement (parameters, monitor lists, thread columns,
//! telemetry names) is decoded once per read rather than once per row.

use std::collections::HashMap;

/// The JSON columns of a run's measurements, each distinct text decoded once per read:
/// the 100,000 measurements of a run share a few hundred parameter sets and one or two
/// monitor lists, and decoding each row's own (parameters through an untagged enum) was
/// a tenth of a report's time.
#[derive(Default)]
pub(crate) struct Decoded {
    pub(crate) params: Memo<perflab_core::Params>,
    pub(crate) notes: Memo<Vec<String>>,
    pub(crate) monitors: Memo<Vec<String>>,
    pub(crate) cpu_samples: Memo<Vec<(u32, u64)>>,
    pub(crate) cpu_path: Memo<perflab_core::CpuPath>,
    pub(crate) counters: Memo<Vec<perflab_core::ThreadCount>>,
    /// The source, key and label of each telemetry row of the last measurement read, by
    /// the row's place in it.
    telemetry_names: Vec<[String; 3]>,
}

impl Decoded {
    /// The source, key and label of the `k`-th telemetry row of a measurement, from their
    /// columns' bytes. A measurement's rows name the same things in the same order as
    /// the one before it (59 rows each with the default monitors on two CPUs, millions
    /// in an export), so each is copied from the last measurement's `k`-th row where its
    /// bytes are the same, and only what differs is checked as UTF-8 and read.
    pub(crate) fn telemetry_names(
        &mut self,
        k: usize,
        columns: [&[u8]; 3],
    ) -> Result<[String; 3], std::str::Utf8Error> {
        if let Some(known) = self.telemetry_names.get(k) {
            if known.iter().zip(columns).all(|(s, c)| s.as_bytes() == c) {
                return Ok(known.clone());
            }
        }
        let mut names: [String; 3] = Default::default();
        for (name, bytes) in names.iter_mut().zip(columns) {
            *name = std::str::from_utf8(bytes)?.to_string();
        }
        let known = &mut self.telemetry_names;
        if k < known.len() {
            known[k].clone_from(&names);
        } else if k == known.len() {
            known.push(names.clone());
        }
        Ok(names)
    }

    /// How many telemetry rows the measurements read so far had.
    pub(crate) fn telemetry_rows(&self) -> usize {
        self.telemetry_names.len()
    }
}

/// Decoded values by their text; cleared when full, so a run whose every row differs
/// (unusual: parameters are per point) costs what it cost before and holds little.
pub(crate) struct Memo<T> {
    seen: HashMap<String, T>,
}

impl<T> Default for Memo<T> {
    fn default() -> Self {
        Self {
            seen: HashMap::new(),
        }
    }
}

/// Distinct texts a [`Memo`] keeps: more points than any grid has.
const MEMO_LIMIT: usize = 4096;

impl<T: Clone> Memo<T> {
    pub(crate) fn get<E>(
        &mut self,
        text: &str,
        decode: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<T, E> {
        if let Some(v) = self.seen.get(text) {
            return Ok(v.clone());
        }
        let v = decode(text)?;
        if self.seen.len() >= MEMO_LIMIT {
            self.seen.clear();
        }
        self.seen.insert(text.to_string(), v.clone());
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn telemetry_names_follow_the_rows_whatever_the_last_measurement_named() {
        let mut d = Decoded::default();
        let names = |d: &mut Decoded, k: usize, c: [&str; 3]| {
            d.telemetry_names(k, c.map(str::as_bytes)).unwrap()
        };
        let row = |a: &str, b: &str, c: &str| [a, b, c].map(String::from);
        // A measurement of two rows, then one of three whose second row differs.
        assert_eq!(
            names(&mut d, 0, ["irq", "LOC", "timer"]),
            row("irq", "LOC", "timer")
        );
        assert_eq!(names(&mut d, 1, ["irq", "NMI", ""]), row("irq", "NMI", ""));
        assert_eq!(
            names(&mut d, 0, ["irq", "LOC", "timer"]),
            row("irq", "LOC", "timer")
        );
        assert_eq!(
            names(&mut d, 1, ["irq", "RES", "resched"]),
            row("irq", "RES", "resched")
        );
        assert_eq!(
            names(&mut d, 2, ["cpu", "user", ""]),
            row("cpu", "user", "")
        );
        // Out of step (a row without its predecessors): read, not remembered.
        assert_eq!(names(&mut d, 7, ["x", "y", "z"]), row("x", "y", "z"));
        assert_eq!(
            names(&mut d, 1, ["irq", "RES", "resched"]),
            row("irq", "RES", "resched")
        );
        assert!(d.telemetry_names(0, [b"irq", b"\xff", b""]).is_err());
    }

    #[test]
    fn a_memo_decodes_each_text_once_and_forgets_when_full() {
        let mut memo = Memo::<usize>::default();
        let decoded = std::cell::Cell::new(0);
        let get = |memo: &mut Memo<usize>, text: &str| {
            memo.get(text, |t| {
                decoded.set(decoded.get() + 1);
                Ok::<_, &str>(t.len())
            })
            .unwrap()
        };
        assert_eq!(get(&mut memo, "abc"), 3);
        assert_eq!(get(&mut memo, "abc"), 3);
        assert_eq!(get(&mut memo, "de"), 2);
        assert_eq!(decoded.get(), 2);
        for i in 0..MEMO_LIMIT + 10 {
            assert_eq!(get(&mut memo, &"x".repeat(i % 50 + 1)), i % 50 + 1);
            let _ = get(&mut memo, &format!("{i:08}"));
        }
        assert!(memo.seen.len() <= MEMO_LIMIT);
        // An error is passed on and nothing is kept for it.
        let e = memo.get("bad", |_| Err("no"));
        assert!(e.is_err());
        assert!(!memo.seen.contains_key("bad"));
    }
}
