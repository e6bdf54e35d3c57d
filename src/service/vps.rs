//! What the `vps` module's resources (networks, instances, certificates) share: the pool checks
//! of a create in the documented order, the digest that tells a retry from a reuse of an
//! idempotency key, and how long a transient state may last. The resources themselves live in
//! `networks`, `instances` and `certificates`.

use sha2::{Digest, Sha256};

use super::Service;
use super::checks::{check_capability, check_location, check_offer, check_pool_active};
use crate::domain::states::OfferState;
use crate::error::{Code, Error, FieldViolation, Result};
use crate::store::VisiblePool;

/// How long a network, instance or certificate may stay `pending`, `provisioning` or `deleting`
/// before it is reported stuck.
pub const STATE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(3600);

/// The most items a list returns.
pub const LIST_LIMIT: i64 = 1000;

/// When a resource entering a transient state now counts as stuck.
pub fn deadline(now: i64) -> Option<i64> {
    Some(now + STATE_DEADLINE.as_micros() as i64)
}

/// The digest earlier releases stored for a create request: of the JSON of the fields they
/// listed by hand (everything but its idempotency key); still recognised on a retry.
pub fn legacy_digest(canonical: &serde_json::Value) -> String {
    Sha256::digest(canonical.to_string().as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// `None` for an empty optional id, as the store keeps it.
pub fn optional(id: &str) -> Option<String> {
    (!id.is_empty()).then(|| id.to_owned())
}

/// The same error with its field violations (and message) naming `to` where the shared checks
/// named `from` (they speak of a cluster's `location`; a subnet's or an instance's is `region`).
pub fn rename_field(mut error: Error, from: &str, to: &str) -> Error {
    if error.code != Code::InvalidInput {
        return error;
    }
    if let Some(serde_json::Value::Array(fields)) = error.details.get_mut("fields") {
        for field in fields.iter_mut() {
            if field["field"] == from {
                field["field"] = to.into();
            }
        }
    }
    error.message = error.message.replacen(&format!("{from}: "), &format!("{to}: "), 1);
    error
}

/// A region a subnet or an instance names must be a region of the pool's account (a GKE zone
/// is not one) that the tenant's offer does not exclude; `INVALID_INPUT` naming `field`, and
/// `INVALID_STATE` for a suspended offer.
pub fn check_region(pool: &VisiblePool, region: &str, field: &str) -> Result<()> {
    let location = check_location(pool, region).map_err(|e| rename_field(e, "location", field))?;
    if location.zone.is_some() {
        let (_, regions) = super::checks::zones_and_regions(&pool.pool.provider, &pool.locations);
        return Err(Error::fields(vec![FieldViolation::new(
            field,
            format!("{region:?} is a zone; name one of the regions of pool {:?}: {}", pool.pool.id, regions.join(", ")),
        )])
        .with_detail("regions", regions));
    }
    check_offer(pool, region).map_err(|e| rename_field(e, "location", field))
}

impl Service {
    /// The checks of a `vps` create on its pool, in the documented order: visible to the tenant
    /// (`NOT_FOUND`), its provider providing `capability` (`UNSUPPORTED`), active
    /// (`INVALID_STATE`), and the tenant's offer not suspended (`INVALID_STATE`; regions are
    /// checked by [`check_region`]).
    pub async fn vps_pool(&self, tenant: &str, pool_id: &str, capability: &str) -> Result<VisiblePool> {
        let pool = self.check_pool_visible(tenant, pool_id).await?;
        check_capability(&pool, capability)?;
        check_pool_active(&pool)?;
        if let Some((state, _)) = &pool.offer
            && *state != OfferState::Active
        {
            check_offer(&pool, "")?;
        }
        Ok(pool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_renamed_field_keeps_its_description() {
        let error = Error::fields(vec![FieldViolation::new("location", "\"x\" is not a location")]);
        let renamed = rename_field(error, "location", "subnets[1].region");
        assert_eq!(renamed.details["fields"][0]["field"], "subnets[1].region");
        assert!(renamed.message.contains("subnets[1].region: \"x\""), "{}", renamed.message);
        let other = rename_field(Error::invalid_state("x"), "location", "region");
        assert_eq!(other.code, Code::InvalidState);
    }
}
