//! The text of a secret option (a join token, a key), which no `Debug` and so no log of the
//! options prints.

/// A secret option's text: `Debug` (and so any log of the options) shows `<redacted>`.
#[derive(Clone)]
pub struct Redacted(pub String);

impl std::str::FromStr for Redacted {
    type Err = std::convert::Infallible;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(Redacted(text.to_owned()))
    }
}

impl std::fmt::Debug for Redacted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}
