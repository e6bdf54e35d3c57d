//! Which fields an update names: its `update_mask`, filled and checked by the API layer (the keys
//! a JSON body gave, a gRPC caller's own mask, or else the fields given a value), by proto name.
//! A named field is set to the value given: an empty list clears a list, an absent value clears
//! the field.

use prost_types::FieldMask;

use crate::error::{Error, FieldViolation, Result};

/// The fields an update names.
#[derive(Clone, Copy, Debug)]
pub struct Named<'a>(&'a [String]);

impl<'a> Named<'a> {
    /// The fields `mask` names.
    pub fn of(mask: &'a Option<FieldMask>) -> Self {
        Self(mask.as_ref().map(|m| m.paths.as_slice()).unwrap_or_default())
    }

    /// Whether `field` (its proto name) is named.
    pub fn has(&self, field: &str) -> bool {
        self.0.iter().any(|path| path == field)
    }

    /// Whether no field is named.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Named<'_> {
    /// The new value of a field that cannot be emptied (a name, a state): none when the field
    /// is not named, `INVALID_INPUT` naming it when it is named without a value.
    pub fn required<T>(&self, field: &str, json_name: &str, value: Option<T>) -> Result<Option<T>> {
        match (self.has(field), value) {
            (false, _) => Ok(None),
            (true, Some(value)) => Ok(Some(value)),
            (true, None) => Err(Error::fields(vec![FieldViolation::new(
                json_name,
                "is named in updateMask without a value, and cannot be emptied: give the new value or leave it out",
            )])),
        }
    }

    /// The new value of a field that can be emptied (a description): none when the field is not
    /// named, its value or the empty one when it is.
    pub fn clearable<T: Default>(&self, field: &str, value: Option<T>) -> Option<T> {
        self.has(field).then(|| value.unwrap_or_default())
    }

    /// The new value of a list or map: none when the field is not named, what was given (even
    /// nothing, which empties it) when it is.
    pub fn list<T>(&self, field: &str, value: T) -> Option<T> {
        self.has(field).then_some(value)
    }

    /// `INVALID_INPUT` when no field is named, listing those that can be (by JSON name).
    pub fn require_some(&self, accepted: &[&str]) -> Result<()> {
        if !self.is_empty() {
            return Ok(());
        }
        Err(Error::invalid_input(format!("name at least one field to change: {}", accepted.join(", ")))
            .with_detail("accepted", serde_json::json!(accepted)))
    }
}
