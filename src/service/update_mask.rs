//! Which fields an update names: its `update_mask`, filled and checked by the API layer (the keys
//! a JSON body gave, a gRPC caller's own mask, or else the fields given a value), by proto name.
//! A named field is set to the value given: an empty list clears a list, an absent value clears
//! the field.

use prost_types::FieldMask;

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
