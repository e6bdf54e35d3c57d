//! What a change of a resource's desired state asks of its provider: one classification per
//! kind, which a plan shows before the change and the reconciler follows after it. A kind's
//! module holds the step functions its reconciler takes (the plan runs the same functions from
//! the state as last applied), so what a plan says cannot drift from what a pass does.

pub mod deletes;
pub mod kubernetes;
pub mod load_balancer_spec;
pub mod load_balancers;
pub mod metal;
pub mod vps;

use std::fmt;

use serde_json::Value;

use crate::error::Error;

/// How much of a provider object a change disturbs, weakest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Effect {
    /// Nothing at the provider: the change is recorded only.
    None,
    /// The provider object is changed where it stands.
    InPlace,
    /// Nodes are recreated a few at a time.
    Rolling,
    /// The provider object is deleted and made anew.
    Replace,
    /// The resource is deleted, and its provider objects with it (a delete's effect).
    Delete,
    /// The call would be refused.
    Refused,
}

impl Effect {
    /// Its name in the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::None => "none",
            Effect::InPlace => "inPlace",
            Effect::Rolling => "rolling",
            Effect::Replace => "replace",
            Effect::Delete => "delete",
            Effect::Refused => "refused",
        }
    }
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the provider is asked to do with one object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Make it.
    Create,
    /// Change it where it stands.
    Update,
    /// Remove it.
    Delete,
    /// Remove it and make it anew.
    Recreate,
}

impl Action {
    /// Its name in the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Update => "update",
            Action::Delete => "delete",
            Action::Recreate => "recreate",
        }
    }
}

/// One field a change sets to another value.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldChange {
    /// Its JSON path in the resource (`nodePools[0].machineType`).
    pub field: String,
    /// The value before, as JSON.
    pub from: Value,
    /// The value after, as JSON.
    pub to: Value,
    /// What changing it does at the provider.
    pub effect: Effect,
    /// What the provider does for it, in words.
    pub detail: String,
}

/// One object the provider is asked about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderObject {
    /// What it is asked to do.
    pub action: Action,
    /// `gke`, `digitalocean`, `redfish` or `ipmi`.
    pub provider: &'static str,
    /// The provider's kind of object (`node pool`).
    pub kind: &'static str,
    /// Its name or id at the provider.
    pub name: String,
}

/// Why the real call would be refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The code the real call answers (`INVALID_INPUT`).
    pub code: &'static str,
    /// The field at fault by JSON path; empty for the whole call.
    pub field: String,
    /// What was wrong and what would be accepted.
    pub description: String,
}

/// What a change does: its fields, the provider calls it takes and what users notice.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// The fields that change.
    pub changes: Vec<FieldChange>,
    /// The provider objects asked about, in order (each named once, with its strongest action).
    pub provider_objects: Vec<ProviderObject>,
    /// What users of the resource will notice.
    pub disruptions: Vec<String>,
    /// What it does to quotas and the budget.
    pub quota_effects: Vec<String>,
    /// Why the real call would be refused; empty when it would not be.
    pub violations: Vec<Violation>,
}

impl Plan {
    /// The plan of a call the real call would refuse with `error`: each field it names, or the
    /// whole call.
    pub fn refused(error: &Error) -> Plan {
        let code = error.code.as_str();
        let fields = error.details.get("fields").and_then(Value::as_array).cloned().unwrap_or_default();
        let text = |value: &Value, key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let mut violations: Vec<Violation> = fields
            .iter()
            .map(|field| Violation { code, field: text(field, "field"), description: text(field, "description") })
            .collect();
        if violations.is_empty() {
            violations.push(Violation { code, field: String::new(), description: error.message.clone() });
        }
        Plan { violations, ..Plan::default() }
    }

    /// The strongest effect of its changes; `none` for none, `refused` when it would be.
    pub fn effect(&self) -> Effect {
        if !self.violations.is_empty() {
            return Effect::Refused;
        }
        self.changes.iter().map(|c| c.effect).max().unwrap_or(Effect::None)
    }

    /// Adds a changed field.
    pub fn change(
        &mut self,
        field: impl Into<String>,
        from: Value,
        to: Value,
        effect: Effect,
        detail: impl Into<String>,
    ) {
        self.changes.push(FieldChange { field: field.into(), from, to, effect, detail: detail.into() });
    }

    /// Adds `field` when `from` and `to` differ.
    pub fn compare<T: serde::Serialize + PartialEq>(
        &mut self,
        field: &str,
        from: &T,
        to: &T,
        effect: Effect,
        detail: impl FnOnce() -> String,
    ) {
        if from != to {
            self.change(field, json(from), json(to), effect, detail());
        }
    }

    /// Names a provider object; one already named keeps the stronger action (a recreate or a
    /// delete over an update).
    pub fn ask(&mut self, action: Action, provider: &'static str, kind: &'static str, name: impl Into<String>) {
        let name = name.into();
        let rank = |a: Action| match a {
            Action::Update => 0,
            Action::Create => 1,
            Action::Recreate => 2,
            Action::Delete => 3,
        };
        match self.provider_objects.iter_mut().find(|o| o.kind == kind && o.name == name && o.provider == provider) {
            Some(known) if rank(action) > rank(known.action) => known.action = action,
            Some(_) => {}
            None => self.provider_objects.push(ProviderObject { action, provider, kind, name }),
        }
    }

    /// Adds what users will notice, once.
    pub fn disrupt(&mut self, what: impl Into<String>) {
        let what = what.into();
        if !self.disruptions.contains(&what) {
            self.disruptions.push(what);
        }
    }
}

/// `value` as JSON (a value that does not serialize is `null`).
pub fn json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_effect_is_the_strongest_of_the_changes() {
        let mut plan = Plan::default();
        assert_eq!(plan.effect(), Effect::None);
        plan.change("description", json(&"a"), json(&"b"), Effect::None, "");
        plan.change("nodeCount", json(&1), json(&2), Effect::InPlace, "");
        plan.change("machineType", json(&"a"), json(&"b"), Effect::Rolling, "");
        assert_eq!(plan.effect(), Effect::Rolling);
    }

    #[test]
    fn a_refusal_names_each_field_or_else_the_call() {
        let fields = Error::fields(vec![crate::error::FieldViolation::new("sizeGigabytes", "a volume only grows")]);
        let plan = Plan::refused(&fields);
        assert_eq!(plan.effect(), Effect::Refused);
        assert_eq!(plan.violations[0].field, "sizeGigabytes");
        assert_eq!(plan.violations[0].code, "INVALID_INPUT");
        let state = Plan::refused(&Error::invalid_state("volume \"x\" is deleting and cannot change"));
        assert_eq!((state.violations[0].code, state.violations[0].field.as_str()), ("INVALID_STATE", ""));
    }

    #[test]
    fn an_object_asked_twice_keeps_its_strongest_action() {
        let mut plan = Plan::default();
        plan.ask(Action::Update, "gke", "node pool", "general");
        plan.ask(Action::Recreate, "gke", "node pool", "general");
        plan.ask(Action::Update, "gke", "node pool", "general");
        assert_eq!(plan.provider_objects.len(), 1);
        assert_eq!(plan.provider_objects[0].action, Action::Recreate);
    }
}
