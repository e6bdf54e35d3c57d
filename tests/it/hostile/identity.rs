//! Revoked principals, keys and bindings: what they can still reach, and how many bindings one may hold.
