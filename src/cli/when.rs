//! Times as a person reads them in a table: ages (`5m`, `3h`, `2d`) and distances from now
//! (`in 1h`, `2d ago`), from the RFC 3339 times of the API's JSON, without a date-time crate.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

/// Seconds since the epoch of an RFC 3339 time in UTC (`2026-12-01T08:42:20.5Z`), as the JSON
/// mapping writes timestamps; `None` for anything else.
pub fn parse(value: &Value) -> Option<i64> {
    crate::domain::dates::rfc3339_seconds(value.as_str()?)
}

fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or_default()
}

/// How long ago `at` was, as kubectl's AGE column says it.
pub fn age(at: i64) -> String {
    span((now() - at).max(0))
}

/// How far `at` is from now: `in 1h`, `2d ago`. Past a minute it rounds to the nearest one, so
/// that a token issued for an hour a moment ago expires "in 1h", not "in 59m".
pub fn relative(at: i64) -> String {
    let delta = at - now();
    let round = |d: i64| if d < 60 { d } else { (d + 30) / 60 * 60 };
    if delta >= 0 { format!("in {}", span(round(delta))) } else { format!("{} ago", span(round(-delta))) }
}

/// An RFC 3339 time to the second: `2026-12-01T08:42:20Z` for `2026-12-01T08:42:20.881737Z`.
pub fn to_the_second(text: &str) -> String {
    match text.split_once('.') {
        Some((whole, _)) => format!("{whole}Z"),
        None => text.to_owned(),
    }
}

/// A duration in its largest whole unit: `45s`, `5m`, `3h`, `2d`, `1y`.
fn span(seconds: i64) -> String {
    match seconds {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3600),
        s if s < 365 * 86_400 => format!("{}d", s / 86_400),
        s => format!("{}y", s / (365 * 86_400)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_the_json_mappings_times() {
        assert_eq!(parse(&json!("1970-01-01T00:00:00Z")), Some(0));
        assert_eq!(parse(&json!("2000-02-29T00:00:00Z")), Some(951_782_400));
        assert_eq!(parse(&json!("2026-12-29T12:15:12.250Z")), Some(1_798_546_512));
        assert_eq!(parse(&json!("yesterday")), None);
        assert_eq!(parse(&json!(12)), None);
    }

    #[test]
    fn spans_read_in_their_largest_unit() {
        assert_eq!(span(45), "45s");
        assert_eq!(span(3599), "59m");
        assert_eq!(span(7200), "2h");
        assert_eq!(span(3 * 86_400 + 5), "3d");
        assert_eq!(relative(now() + 3630), "in 1h");
        assert_eq!(relative(now() + 3590), "in 1h");
        assert_eq!(to_the_second("2026-12-01T08:42:20.881737Z"), "2026-12-01T08:42:20Z");
        assert_eq!(relative(now() - 130), "2m ago");
    }
}
