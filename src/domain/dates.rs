//! Civil dates without a date-time crate: the seconds of an RFC 3339 time in UTC, as the API's
//! JSON writes timestamps and DigitalOcean reports them.

/// Seconds since the epoch of an RFC 3339 time in UTC (`2026-12-01T08:42:20.5Z`, fractions
/// dropped; `+00:00` is UTC too); `None` for anything else, another offset included.
pub fn rfc3339_seconds(text: &str) -> Option<i64> {
    let (date, time) = text.split_once('T')?;
    let time = time.strip_suffix('Z').or_else(|| time.strip_suffix("+00:00"))?;
    let mut ymd = date.splitn(3, '-').map(|part| part.parse::<i64>().ok());
    let (year, month, day) = (ymd.next()??, ymd.next()??, ymd.next()??);
    let whole = time.split('.').next()?;
    let mut hms = whole.splitn(3, ':').map(|part| part.parse::<i64>().ok());
    let (hour, minute, second) = (hms.next()??, hms.next()??, hms.next()??);
    let in_range = (1..=12).contains(&month)
        && (1..=31).contains(&day)
        && (0..24).contains(&hour)
        && (0..60).contains(&minute)
        && (0..=60).contains(&second);
    in_range.then(|| days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second)
}

/// `micros` since the epoch as an RFC 3339 time in UTC, to the microsecond.
pub fn rfc3339_micros(micros: i64) -> String {
    let nanos = (micros.rem_euclid(1_000_000) * 1000) as i32;
    prost_types::Timestamp { seconds: micros.div_euclid(1_000_000), nanos }.to_string()
}

/// Howard Hinnant's civil-to-days algorithm: the day count of a proleptic Gregorian date.
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let doy = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_times_in_utc_are_read_to_the_second() {
        assert_eq!(rfc3339_seconds("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(rfc3339_seconds("2000-02-29T00:00:00Z"), Some(951_782_400));
        assert_eq!(rfc3339_seconds("2026-12-29T12:15:12.75Z"), Some(1_798_546_512));
        assert_eq!(rfc3339_seconds("2026-12-29T12:15:12+00:00"), Some(1_798_546_512));
        assert_eq!(rfc3339_seconds("1969-12-31T23:59:59Z"), Some(-1));
    }

    #[test]
    fn other_offsets_and_shapes_are_not_read() {
        for bad in ["2026-12-29T12:15:12+01:00", "2026-12-29T12:15:12", "2026-13-01T00:00:00Z", "2026-12-29", "soon"] {
            assert_eq!(rfc3339_seconds(bad), None, "{bad}");
        }
    }
}
