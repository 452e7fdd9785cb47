//! Times in a unit that fits them: a table picks one unit from its largest
//! value (µs below 10 ms, ms below 10 s, s above) and says which in its
//! header, so that its columns line up and read at a glance.

/// A unit for the times of one table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Microseconds, three decimals (ns resolution).
    Micros,
    /// Milliseconds, three decimals.
    Millis,
    /// Seconds, three decimals.
    Seconds,
}

impl Unit {
    /// The unit for a table whose largest absolute time is `max_ns`.
    pub fn for_max(max_ns: i64) -> Unit {
        match max_ns.unsigned_abs() {
            n if n < 10_000_000 => Unit::Micros,
            n if n < 10_000_000_000 => Unit::Millis,
            _ => Unit::Seconds,
        }
    }

    /// Its symbol.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Micros => "µs",
            Unit::Millis => "ms",
            Unit::Seconds => "s",
        }
    }

    /// `ns` in this unit, three decimals; never "-0.000".
    pub fn fmt(self, ns: i64) -> String {
        let div = match self {
            Unit::Micros => 1e3,
            Unit::Millis => 1e6,
            Unit::Seconds => 1e9,
        };
        let text = format!("{:.3}", ns as f64 / div);
        no_negative_zero(text)
    }
}

/// `part` as a percentage of `whole`, one decimal, "-" when `whole` is 0;
/// a value that rounds to zero is "0.0", never "-0.0".
pub fn percent(part: i64, whole: i64) -> String {
    if whole == 0 {
        return "-".into();
    }
    no_negative_zero(format!("{:.1}", part as f64 * 100.0 / whole as f64))
}

fn no_negative_zero(text: String) -> String {
    match text.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_scale_and_never_show_negative_zero() {
        assert_eq!(Unit::for_max(9_999_999), Unit::Micros);
        assert_eq!(Unit::for_max(-10_000_000), Unit::Millis);
        assert_eq!(Unit::for_max(12_000_000_000), Unit::Seconds);
        assert_eq!(Unit::Millis.fmt(1_234_567), "1.235");
        assert_eq!(Unit::Micros.fmt(-0), "0.000");
        assert_eq!(Unit::Seconds.fmt(-1), "0.000");
        assert_eq!(percent(-1, 100_000), "0.0");
        assert_eq!(percent(-1, 100), "-1.0");
        assert_eq!(percent(5, 0), "-");
    }
}
