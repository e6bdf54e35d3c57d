//! What is wrong with a create or update so far, the same for every resource: the schema
//! stage's violations (the context's) and those of the service's own checks, gathered so that a
//! request learns every violated field at once, and the one answer made of them.

use super::Context;
use crate::error::{Code, Error, FieldViolation, Result};

/// Whether field path `inner` is `outer` or inside it (`forwarding[0].entryPort` is inside
/// `forwarding`).
pub fn within(inner: &str, outer: &str) -> bool {
    inner == outer || inner.strip_prefix(outer).is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
}

/// The field violations an error names in `details.fields`, when it is an `INVALID_INPUT` about
/// fields.
pub fn field_violations(error: &Error) -> Option<Vec<FieldViolation>> {
    if error.code != Code::InvalidInput {
        return None;
    }
    let fields = error.details.get("fields")?.as_array()?;
    let text = |field: &serde_json::Value, key: &str| field[key].as_str().unwrap_or_default().to_owned();
    Some(fields.iter().map(|f| FieldViolation::new(text(f, "field"), text(f, "description"))).collect())
}

/// What is wrong with a create or update so far: the schema stage's violations (the context's)
/// and those of the service's own checks. The checks run even when the schema stage found
/// violations, so that a request learns every violated field at once; a check that cannot say
/// more than a violation already does (a lookup of an id the schema stage found malformed) is
/// left out, and nothing is written while there are any.
pub struct Findings<'a> {
    ctx: &'a Context,
    rules: Vec<FieldViolation>,
    /// The other details of refusals whose fields were taken in (the account's `regions`, an
    /// offer's `excludedRegions`), for the answer.
    details: serde_json::Map<String, serde_json::Value>,
}

impl<'a> Findings<'a> {
    /// Nothing found yet but what the schema stage found.
    pub fn new(ctx: &'a Context) -> Self {
        Self { ctx, rules: Vec::new(), details: serde_json::Map::new() }
    }

    /// The call's context.
    pub fn ctx(&self) -> &'a Context {
        self.ctx
    }

    /// Whether the schema stage found `field` (or a field inside it) wrong: looking its value up
    /// would only repeat that.
    pub fn schema_refused(&self, field: &str) -> bool {
        self.ctx.schema.kept().iter().any(|violation| within(&violation.field, field))
    }

    /// Whether `field` (or a field inside it) is already found wrong, by the schema stage or by
    /// a check.
    pub fn names(&self, field: &str) -> bool {
        self.schema_refused(field) || self.rules.iter().any(|violation| within(&violation.field, field))
    }

    /// Whether anything is wrong so far.
    pub fn any(&self) -> bool {
        !self.ctx.schema.is_empty() || !self.rules.is_empty()
    }

    /// Adds violations of the service's own checks, but those on a field the schema stage found
    /// wrong, inside one or around one: a rule that compares a value which broke its own rule
    /// says nothing more.
    pub fn add(&mut self, rules: impl IntoIterator<Item = FieldViolation>) {
        for rule in rules {
            let repeats = self
                .ctx
                .schema
                .kept()
                .iter()
                .any(|schema| within(&schema.field, &rule.field) || within(&rule.field, &schema.field));
            if !repeats {
                self.rules.push(rule);
            }
        }
    }

    /// The outcome of a check: its value; or, for an `INVALID_INPUT` about fields, none, its
    /// fields (and details) taken in; any other refusal is the answer (see [`Findings::refuse`]).
    pub fn check<T>(&mut self, outcome: Result<T>) -> Result<Option<T>> {
        match outcome {
            Ok(value) => Ok(Some(value)),
            Err(error) => match field_violations(&error) {
                Some(fields) => {
                    self.add(fields);
                    for (key, value) in
                        error.details.iter().filter(|(key, _)| !matches!(key.as_str(), "fields" | "truncated"))
                    {
                        self.details.entry(key.clone()).or_insert_with(|| value.clone());
                    }
                    Ok(None)
                }
                None => Err(self.refuse(error)),
            },
        }
    }

    /// The answer to a refusal that ends the checks (a row not found, one being deleted, a
    /// decision): `error`, unless fields are already found wrong: then those, as they were
    /// found first and a lookup on a request whose fields are wrong tells nothing more reliable.
    pub fn refuse(&self, error: Error) -> Error {
        self.report().err().unwrap_or(error)
    }

    /// `Ok` when nothing is wrong, else `INVALID_INPUT` naming every violation found.
    pub fn report(&self) -> Result<()> {
        let Err(mut error) = self.ctx.report(self.rules.clone()) else { return Ok(()) };
        for (key, value) in &self.details {
            error.details.entry(key.clone()).or_insert_with(|| value.clone());
        }
        Err(error)
    }
}

/// `rules` (a service's own violations of a request) without those on a field the schema stage
/// already found wrong, or on a field inside one or around one: a bound compared with a value
/// that broke its own rule says nothing more.
pub fn beside_schema(ctx: &Context, rules: Vec<FieldViolation>) -> Vec<FieldViolation> {
    let mut findings = Findings::new(ctx);
    findings.add(rules);
    findings.rules
}

/// The answer to a request whose check `error` refused it, with `rules` (the service's own
/// violations found so far). A refusal about fields (the location, the network) joins the
/// schema stage's violations and the rules in one `INVALID_INPUT`, keeping its other details
/// (the allowed `zones` and `regions`); any other refusal (a pool not found, a cluster being
/// deleted) is the answer unless the request's fields were already wrong: then those are.
pub fn refusal(ctx: &Context, error: Error, rules: Vec<FieldViolation>) -> Error {
    let mut findings = Findings::new(ctx);
    findings.add(rules);
    if field_violations(&error).is_none() && ctx.schema.is_empty() {
        return error;
    }
    match findings.check(Err::<(), _>(error.clone())) {
        Err(answer) => answer,
        Ok(_) => findings.report().err().unwrap_or(error),
    }
}
