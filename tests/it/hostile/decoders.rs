//! Hostile request bodies: the JSON gateway, the binary wire scan and the validator.
