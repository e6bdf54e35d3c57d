//! `labelSelector` and `fieldSelector` of list and delete-collection calls, in the equality and
//! existence forms clients send (`app=bcd,tier!=web,ready,!old`).

use serde_json::Value;

/// One requirement of a selector.
#[derive(Debug, PartialEq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    Absent(String),
}

/// A parsed selector: every requirement must hold.
#[derive(Debug, Default, PartialEq)]
pub struct Selector(Vec<Requirement>);

impl Selector {
    /// Parses `text`; set-based forms (`in (...)`) are refused with a message.
    pub fn parse(text: &str) -> Result<Selector, String> {
        let mut requirements = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let requirement = if let Some((key, value)) = part.split_once("!=") {
                Requirement::NotEquals(key.trim().into(), value.trim().into())
            } else if let Some((key, value)) = part.split_once("==").or_else(|| part.split_once('=')) {
                Requirement::Equals(key.trim().into(), value.trim().into())
            } else if let Some(key) = part.strip_prefix('!') {
                Requirement::Absent(key.trim().into())
            } else if part.contains(' ') || part.contains('(') {
                return Err(format!("the fake API server reads equality selectors only, not {part:?}"));
            } else {
                Requirement::Exists(part.into())
            };
            requirements.push(requirement);
        }
        Ok(Selector(requirements))
    }

    /// Whether labels (a JSON map, or null) satisfy it.
    pub fn matches_labels(&self, labels: &Value) -> bool {
        self.matches(|key| labels.get(key).and_then(Value::as_str).map(str::to_owned))
    }

    /// Whether an object's fields (`metadata.name`, `spec.nodeName`, `status.phase`) satisfy it.
    pub fn matches_fields(&self, object: &Value) -> bool {
        self.matches(|path| {
            let found = path.split('.').try_fold(object, |at, key| at.get(key))?;
            Some(found.as_str().map(str::to_owned).unwrap_or_else(|| found.to_string()))
        })
    }

    fn matches(&self, lookup: impl Fn(&str) -> Option<String>) -> bool {
        self.0.iter().all(|requirement| match requirement {
            Requirement::Equals(key, value) => lookup(key).as_deref() == Some(value.as_str()),
            Requirement::NotEquals(key, value) => lookup(key).as_deref() != Some(value.as_str()),
            Requirement::Exists(key) => lookup(key).is_some(),
            Requirement::Absent(key) => lookup(key).is_none(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equality_and_existence_requirements_all_hold() {
        let labels = json!({"app": "bcd", "better-compute.dev/substrate-pool": "pool_1"});
        assert!(Selector::parse("app=bcd,better-compute.dev/substrate-pool==pool_1").unwrap().matches_labels(&labels));
        assert!(!Selector::parse("app=bcd,tier=web").unwrap().matches_labels(&labels));
        assert!(Selector::parse("app,!old,tier!=web").unwrap().matches_labels(&labels));
        assert!(Selector::parse("").unwrap().matches_labels(&Value::Null));
        assert!(Selector::parse("app in (a,b)").is_err());
        let pod = json!({"metadata": {"name": "p"}, "spec": {"nodeName": "n1"}});
        assert!(Selector::parse("spec.nodeName=n1,metadata.name=p").unwrap().matches_fields(&pod));
    }
}
