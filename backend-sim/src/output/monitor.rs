//! Reads the live monitor table of a running program (`docs/monitor.md`,
//! written by heisen's process runtime with `HEISEN_MONITOR=1`) and
//! renders the run's critical path so far (R10): the maximum `L` over the
//! latest sample of every location, where it ends, and each selected
//! region's share of it and the run's length with the region at zero.
//!
//! Reading goes through the core's seqlock reader (`heisen_core::monitor`)
//! on the table's atomic words; the writer never waits for it. A slot that
//! stays busy for [`TRIES`] readings keeps its previous sample.

use core::fmt::Write as _;
use core::sync::atomic::AtomicU64;

use heisen_core::Snapshot;
use heisen_core::monitor::{Reader, Sample, TableError};

use super::report::READ_SELECTED;

/// Readings of a busy slot before it keeps its previous sample.
pub const TRIES: usize = 64;

/// A selected region's label: its region id and name.
pub type Label = (u32, String);

/// What one reading of the table shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Live {
    /// Process id of the program.
    pub pid: u64,
    /// Measured time its runtime started, ns.
    pub start: u64,
    /// The selected regions' labels in share order; `None` while a region
    /// has not been entered yet.
    pub names: Vec<Option<Label>>,
    /// Locations that published a sample.
    pub locations: usize,
    /// Of those, the ones that ended.
    pub ended: usize,
    /// Locations whose sample was being written at every reading and that
    /// show their previous sample (or none).
    pub busy: usize,
    /// Measured time of the latest sample, ns.
    pub latest: u64,
    /// The combination of the latest samples (R10, 003 Fig. 3): the
    /// longest path with its shares, and per region the largest net.
    pub global: Snapshot<READ_SELECTED>,
}

/// A reader that keeps each slot's last whole sample and the names
/// between readings.
#[derive(Debug, Default)]
pub struct Monitor {
    last: Vec<Option<Sample<READ_SELECTED>>>,
    names: Vec<Option<Label>>,
    names_version: Option<u64>,
}

impl Monitor {
    /// A reader with nothing read yet.
    pub fn new() -> Monitor {
        Monitor::default()
    }

    /// Reads the table once.
    pub fn read(&mut self, words: &[AtomicU64]) -> Result<Live, TableError> {
        let reader = Reader::<AtomicU64, READ_SELECTED>::open(words)?;
        self.read_names(&reader);
        let used = reader.used();
        self.last.resize(used.max(self.last.len()), None);
        let mut busy = 0;
        for (i, last) in self.last.iter_mut().enumerate().take(used) {
            match reader.sample_retrying(i, TRIES) {
                Ok(Some(s)) => *last = Some(s),
                Ok(None) => {}
                Err(_) => busy += 1,
            }
        }
        let samples = || self.last.iter().flatten();
        let header = reader.header();
        Ok(Live {
            pid: header.pid,
            start: header.start,
            names: self.names.clone(),
            locations: samples().count(),
            ended: samples().filter(|s| s.ended).count(),
            busy,
            latest: samples().map(|s| s.time).max().unwrap_or(header.start),
            // R10: the maximum over the latest sample of every location.
            global: samples().fold(Snapshot::ZERO, |g, s| g.combine(&s.path)),
        })
    }

    /// Reads the names again when they changed since the last reading.
    fn read_names(&mut self, reader: &Reader<'_, AtomicU64, READ_SELECTED>) {
        let version = reader.names_version();
        if self.names_version == Some(version) {
            return;
        }
        let k = reader.layout().selected();
        let mut names = Vec::with_capacity(k);
        for slot in 0..k {
            match reader.name(slot) {
                Ok(name) => names
                    .push(name.map(|n| (n.id, String::from_utf8_lossy(n.as_bytes()).into_owned()))),
                // Being written: keep the old ones, read again next time.
                Err(_) => return,
            }
        }
        self.names = names;
        self.names_version = Some(version);
    }
}

fn us(ns: i64) -> String {
    format!("{:.3}", ns as f64 / 1000.0)
}

fn percent(part: i64, whole: i64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.1}%", part as f64 * 100.0 / whole as f64)
    }
}

/// The reading as text (times in µs, as `heisen report`).
pub fn render(live: &Live) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "heisen monitor: pid {}, {} locations ({} ended), latest sample {:.6} s after start (times in µs)",
        live.pid,
        live.locations,
        live.ended,
        live.latest.saturating_sub(live.start) as f64 / 1e9
    );
    if live.busy > 0 {
        let _ = writeln!(
            out,
            "({} locations were writing at every reading: their previous sample is shown)",
            live.busy
        );
    }
    let g = &live.global;
    if !g.active {
        let _ = writeln!(out, "critical path: no location has published one yet (R9)");
        return out;
    }
    let _ = writeln!(
        out,
        "critical path: {} µs, ending at location {}; {} µs in transfers",
        us(g.longest),
        g.location,
        us(g.transfer)
    );
    let named: Vec<(usize, &str)> = live
        .names
        .iter()
        .enumerate()
        .filter_map(|(k, n)| n.as_ref().map(|(_, name)| (k, name.as_str())))
        .collect();
    if named.is_empty() {
        return out;
    }
    let width = named.iter().map(|(_, n)| n.len()).max().unwrap_or(6).max(8);
    let _ = writeln!(
        out,
        "{:<width$}  {:>12}  {:>7}  {:>12}  {:>7}  {:>12}  {:>9}",
        "selected", "inclusive", "% CP", "exclusive", "% CP", "CP if zero", "zero-gain"
    );
    for (k, name) in named {
        let (inc, exc, net) = (g.inclusive[k], g.exclusive[k], g.net[k]);
        let _ = writeln!(
            out,
            "{:<width$}  {:>12}  {:>7}  {:>12}  {:>7}  {:>12}  {:>9}",
            name,
            us(inc),
            percent(inc, g.longest),
            us(exc),
            percent(exc, g.longest),
            us(net),
            percent(g.longest - net, g.longest)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use heisen_core::monitor::{Header, Layout, Writer};

    use super::*;

    const K: usize = 3;

    fn sample(location: u32, longest: i64, ended: bool) -> Sample<K> {
        Sample {
            time: 5_000_000 + u64::from(location),
            ended,
            path: Snapshot {
                location,
                active: true,
                longest,
                transfer: 0,
                inclusive: [longest / 2, longest / 4, 0],
                exclusive: [longest / 2, longest / 4, 0],
                net: [longest / 2, longest - longest / 4, longest],
            },
        }
    }

    fn table() -> Vec<AtomicU64> {
        let layout = Layout::new(K, 4);
        let words: Vec<AtomicU64> = (0..layout.words()).map(|_| AtomicU64::new(0)).collect();
        Writer::create(
            &words,
            layout,
            Header {
                pid: 77,
                start: 1_000_000,
            },
        )
        .unwrap();
        words
    }

    #[test]
    fn an_empty_table_says_nothing_was_published() {
        let words = table();
        let live = Monitor::new().read(&words).unwrap();
        assert_eq!(
            (live.pid, live.locations, live.global.active),
            (77, 0, false)
        );
        assert!(render(&live).contains("no location has published one yet"));
    }

    #[test]
    fn the_path_is_the_longest_latest_sample_and_nets_the_largest() {
        let words = table();
        let writer = Writer::attach(&words, Layout::new(K, 4)).unwrap();
        assert!(writer.set_name(0, 0, "solve"));
        assert!(writer.set_name(1, 4, "exchange"));
        writer
            .claim::<K>(0)
            .unwrap()
            .publish_sample(&sample(0, 8_000, false));
        let one = writer.claim::<K>(1).unwrap();
        one.publish_sample(&sample(1, 20_000, false));
        writer
            .claim::<K>(2)
            .unwrap()
            .publish_sample(&sample(2, 12_000, true));
        let mut monitor = Monitor::new();
        let live = monitor.read(&words).unwrap();
        assert_eq!((live.locations, live.ended, live.busy), (3, 1, 0));
        assert_eq!((live.global.location, live.global.longest), (1, 20_000));
        // R10: the largest net per region over the samples.
        assert_eq!(live.global.net, {
            let mut n = [0; READ_SELECTED];
            n[..3].copy_from_slice(&[10_000, 15_000, 20_000]);
            n
        });
        let text = render(&live);
        assert!(
            text.contains("critical path: 20.000 µs, ending at location 1;"),
            "{text}"
        );
        let rows: Vec<Vec<&str>> = text
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert!(
            rows.contains(&vec![
                "solve", "10.000", "50.0%", "10.000", "50.0%", "10.000", "50.0%"
            ]),
            "{text}"
        );
        assert!(
            rows.contains(&vec![
                "exchange", "5.000", "25.0%", "5.000", "25.0%", "15.000", "25.0%"
            ]),
            "{text}"
        );
        assert!(
            !text.contains("\nregion 2"),
            "an unnamed slot has no row: {text}"
        );
        // The next reading sees the newer sample of location 1.
        one.publish_sample(&sample(1, 30_000, true));
        let live = monitor.read(&words).unwrap();
        assert_eq!((live.global.longest, live.ended), (30_000, 2));
    }

    #[test]
    fn a_slot_busy_at_every_reading_keeps_its_previous_sample() {
        let words = table();
        let layout = Layout::new(K, 4);
        let writer = Writer::attach(&words, layout).unwrap();
        writer
            .claim::<K>(0)
            .unwrap()
            .publish_sample(&sample(0, 8_000, false));
        let mut monitor = Monitor::new();
        assert_eq!(monitor.read(&words).unwrap().global.longest, 8_000);
        // The writer stopped halfway through its next publication.
        let sequence = &words[layout.header_words()];
        sequence.store(
            sequence.load(core::sync::atomic::Ordering::Relaxed) + 1,
            core::sync::atomic::Ordering::Relaxed,
        );
        let live = monitor.read(&words).unwrap();
        assert_eq!(
            (live.busy, live.locations, live.global.longest),
            (1, 1, 8_000)
        );
        assert!(render(&live).contains("1 locations were writing"));
    }

    #[test]
    fn a_table_that_is_not_one_is_an_error() {
        let words: Vec<AtomicU64> = (0..64).map(|_| AtomicU64::new(0x1234)).collect();
        let e = Monitor::new().read(&words).unwrap_err();
        assert!(e.to_string().contains("not a heisen monitor table"), "{e}");
    }
}
