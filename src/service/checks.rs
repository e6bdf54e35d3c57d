//! The checks a create runs on the pool it names, one function each with its documented error,
//! for the resource modules (clusters, load balancers, ...) to call after their decision:
//!
//! 1. [`Service::check_pool_visible`]: the tenant's own pool or one offered to it, else
//!    `NOT_FOUND`;
//! 2. [`check_capability`]: the account's provider provides what the resource needs, else
//!    `UNSUPPORTED`;
//! 3. [`check_pool_active`]: an archived pool takes nothing new (`INVALID_STATE`);
//! 4. [`check_location`]: a zone of the account or the region of one, else `INVALID_INPUT` with
//!    the allowed `zones` and `regions` in `details`;
//! 5. [`check_offer`]: a suspended offer is `INVALID_STATE`, an excluded region `INVALID_INPUT`;
//! 6. quota: [`crate::store::Store::quota_book_in`] inside the resource's own transaction
//!    (`QUOTA_EXCEEDED` with `details.limit`; no quota row grants none);
//! 7. [`Service::check_budget`]: unless the pool's billing mode is `none`, a tenant whose spend
//!    this month has reached a budget is `QUOTA_EXCEEDED` naming the budget.
//!
//! [`Service::check_placement`] runs 1 to 5 and 7 in that order; `Pools.checkPlacement` adds a
//! quota check that books nothing. [`Service::check_project`] checks a `projectId` the create
//! names (a live project of the tenant, else `NOT_FOUND`).
//!
//! Every reference a request makes to a row of the tenant (a cluster, a subnet, an instance a
//! load balancer targets, a certificate) goes through [`of_tenant`], before any decision on the
//! row: another tenant's row answers exactly as an id that does not exist, so no answer tells a
//! caller that an id is in use elsewhere.

use super::Service;
use crate::domain::states::{OfferState, PoolState};
use crate::error::{Code, Error, FieldViolation, Result};
use crate::store::{VisiblePool, now_micros};

/// What managed Kubernetes needs.
pub const MANAGED_KUBERNETES: &str = "managed-kubernetes";
/// What load balancers need.
pub const LOAD_BALANCERS: &str = "load-balancers";
/// What instances need.
pub const INSTANCES: &str = "instances";
/// What networks need.
pub const NETWORKS: &str = "networks";
/// What certificates need.
pub const CERTIFICATES: &str = "certificates";
/// What volumes need.
pub const VOLUMES: &str = "volumes";

/// What each provider provides.
pub fn provider_capabilities(provider: &str) -> &'static [&'static str] {
    match provider {
        "gke" => &[MANAGED_KUBERNETES, NETWORKS],
        "digitalocean" => &[LOAD_BALANCERS, INSTANCES, NETWORKS, CERTIFICATES, VOLUMES],
        _ => &[],
    }
}

/// Whether a provider's accounts are configured with zones (GKE) rather than regions.
pub fn provider_has_zones(provider: &str) -> bool {
    provider == "gke"
}

/// The region of a GKE zone: `us-central1-a` is in `us-central1`.
pub fn region_of_zone(zone: &str) -> &str {
    zone.rsplit_once('-').map_or(zone, |(region, _)| region)
}

/// The zones and the regions of an account's locations, each in the order first seen.
pub fn zones_and_regions(provider: &str, locations: &[String]) -> (Vec<String>, Vec<String>) {
    if !provider_has_zones(provider) {
        return (Vec::new(), locations.to_vec());
    }
    let mut regions: Vec<String> = Vec::new();
    for zone in locations {
        let region = region_of_zone(zone);
        if !regions.iter().any(|r| r == region) {
            regions.push(region.to_owned());
        }
    }
    (locations.to_vec(), regions)
}

/// Where a resource would be placed: the zone (when the location is one) and its region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The zone, for a zonal location.
    pub zone: Option<String>,
    /// The region.
    pub region: String,
}

/// A pool that passed the checks, and where in it.
#[derive(Clone, Debug)]
pub struct Placement {
    /// The pool as the tenant sees it.
    pub pool: VisiblePool,
    /// The checked location.
    pub location: Location,
}

/// The row a reference names when it is `tenant`'s; `NOT_FOUND` naming `kind` and `id` when
/// there is none or it is another tenant's: the two answers are one, word for word. Callers
/// drop rows that do not count (deleted ones) from `row` before.
pub fn of_tenant<T>(
    tenant: &str,
    kind: &str,
    id: &str,
    row: Option<T>,
    tenant_of: impl FnOnce(&T) -> &str,
) -> Result<T> {
    match row {
        Some(row) if tenant_of(&row) == tenant => Ok(row),
        _ => Err(Error::not_found(kind, id)),
    }
}

/// `UNSUPPORTED` unless the pool's provider provides `capability`.
pub fn check_capability(pool: &VisiblePool, capability: &str) -> Result<()> {
    let provides = provider_capabilities(&pool.pool.provider);
    if provides.contains(&capability) {
        return Ok(());
    }
    Err(Error::new(
        Code::Unsupported,
        format!(
            "pool {:?} is on a {} account, which does not provide {capability}; it provides {}",
            pool.pool.id,
            pool.pool.provider,
            provides.join(", ")
        ),
    )
    .with_detail("poolId", pool.pool.id.as_str())
    .with_detail("provider", pool.pool.provider.as_str())
    .with_detail("capability", capability)
    .with_detail("capabilities", provides.to_vec()))
}

/// `INVALID_STATE` for an archived pool: it keeps its resources and takes no new ones.
pub fn check_pool_active(pool: &VisiblePool) -> Result<()> {
    if pool.pool.state == PoolState::Active {
        return Ok(());
    }
    Err(Error::invalid_state(format!("pool {:?} is {} and takes no new resources", pool.pool.id, pool.pool.state))
        .with_detail("poolId", pool.pool.id.as_str())
        .with_detail("state", pool.pool.state.as_str()))
}

/// The location if it is a zone the pool's account is configured with or the region of one;
/// else `INVALID_INPUT` naming `location`, with the allowed `zones` and `regions` in `details`.
pub fn check_location(pool: &VisiblePool, location: &str) -> Result<Location> {
    let (zones, regions) = zones_and_regions(&pool.pool.provider, &pool.locations);
    if zones.iter().any(|z| z == location) {
        return Ok(Location { zone: Some(location.to_owned()), region: region_of_zone(location).to_owned() });
    }
    if regions.iter().any(|r| r == location) {
        return Ok(Location { zone: None, region: location.to_owned() });
    }
    Err(Error::fields(vec![FieldViolation::new("location", not_a_location(location, &pool.pool.id, &zones, &regions))])
        .with_detail("zones", zones)
        .with_detail("regions", regions))
}

/// The longest description of a location refused that lists the zones: a description is cut
/// past 200 bytes (mid-word), so a longer list of zones is left to `details.zones`.
const LOCATION_SENTENCE_BYTES: usize = 200;

/// Why `location` is no location of pool `pool_id`, naming the regions, and the zones where
/// they fit in one whole sentence.
fn not_a_location(location: &str, pool_id: &str, zones: &[String], regions: &[String]) -> String {
    let refused =
        format!("{location:?} is not a location of pool {pool_id:?}: use one of its regions ({})", regions.join(", "));
    if zones.is_empty() {
        return refused;
    }
    let listed = format!("{refused} or one of its zones ({})", zones.join(", "));
    if listed.len() <= LOCATION_SENTENCE_BYTES {
        listed
    } else {
        format!("{refused} or one of their {} zones", zones.len())
    }
}

/// For a platform pool: `INVALID_STATE` when the tenant's offer is suspended, `INVALID_INPUT`
/// (with the `excludedRegions`) when it excludes `region`. A tenant's own pool needs no offer.
pub fn check_offer(pool: &VisiblePool, region: &str) -> Result<()> {
    let Some((state, excluded)) = &pool.offer else { return Ok(()) };
    if *state != OfferState::Active {
        return Err(Error::invalid_state(format!(
            "the offer of pool {:?} to this tenant is {state}: it takes no new resources",
            pool.pool.id
        ))
        .with_detail("poolId", pool.pool.id.as_str())
        .with_detail("offerState", state.as_str()));
    }
    if excluded.iter().any(|r| r == region) {
        return Err(Error::fields(vec![FieldViolation::new(
            "location",
            format!("region {region:?} is excluded from the offer of pool {:?} to this tenant", pool.pool.id),
        )])
        .with_detail("region", region)
        .with_detail("excludedRegions", excluded.clone()));
    }
    Ok(())
}

impl Service {
    /// The pool as `tenant` sees it: its own or offered to it; `NOT_FOUND` otherwise (a pool
    /// that exists and one that does not look the same).
    pub async fn check_pool_visible(&self, tenant: &str, pool_id: &str) -> Result<VisiblePool> {
        self.store.pool_visible(tenant, pool_id).await?.ok_or_else(|| Error::not_found("pool", pool_id))
    }

    /// A `projectId` a create names must be a live project of the tenant; another tenant's
    /// project, a deleted one and one that does not exist are all `NOT_FOUND`. Empty names none.
    pub async fn check_project(&self, tenant: &str, project_id: &str) -> Result<()> {
        if project_id.is_empty() {
            return Ok(());
        }
        let live = match self.store.project_fetch(project_id).await {
            Ok(project) => Some(project).filter(|p| p.deleted_at.is_none()),
            Err(error) if error.code == Code::NotFound => None,
            Err(error) => return Err(error),
        };
        of_tenant(tenant, "project", project_id, live, |p| &p.tenant_id).map(drop)
    }

    /// Unless the pool's billing mode is `none`: `QUOTA_EXCEEDED` naming the first budget of
    /// the tenant that this calendar month's (UTC) spend has reached.
    pub async fn check_budget(&self, tenant: &str, pool: &VisiblePool) -> Result<()> {
        if pool.pool.billing_mode == "none" {
            return Ok(());
        }
        let budgets = self.store.budget_list(tenant).await?;
        if budgets.is_empty() {
            return Ok(());
        }
        let spend = self.store.budget_month_spend(tenant, now_micros()).await?;
        match budgets.iter().find(|budget| spend >= budget.monthly_limit) {
            None => Ok(()),
            Some(budget) => Err(Error::new(
                Code::QuotaExceeded,
                format!(
                    "tenant {tenant:?} has spent {spend} this month, reaching its budget {:?} ({}) of {}",
                    budget.name, budget.id, budget.monthly_limit
                ),
            )
            .with_detail("budgetId", budget.id.as_str())
            .with_detail("budget", budget.name.as_str())
            .with_detail("limit", budget.monthly_limit)
            .with_detail("spend", spend)),
        }
    }

    /// Every check of a create on `pool_id` but the quota, in order: visible, capability,
    /// active, location, offer, budget.
    pub async fn check_placement(
        &self,
        tenant: &str,
        pool_id: &str,
        capability: &str,
        location: &str,
    ) -> Result<Placement> {
        let pool = self.check_pool_visible(tenant, pool_id).await?;
        check_capability(&pool, capability)?;
        check_pool_active(&pool)?;
        let location = check_location(&pool, location)?;
        check_offer(&pool, &location.region)?;
        self.check_budget(tenant, &pool).await?;
        Ok(Placement { pool, location })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_tenants_row_answers_as_an_unknown_id() {
        let theirs = of_tenant("globex", "instance", "inst_x", Some(("acme", 1)), |row| row.0).unwrap_err();
        let unknown = of_tenant("globex", "instance", "inst_x", None::<(&str, i32)>, |row| row.0).unwrap_err();
        assert_eq!((theirs.code, &theirs.message, &theirs.details), (unknown.code, &unknown.message, &unknown.details));
        assert_eq!(theirs.code, Code::NotFound);
        assert_eq!(of_tenant("acme", "instance", "inst_x", Some(("acme", 1)), |row| row.0).unwrap(), ("acme", 1));
    }

    #[test]
    fn a_location_refused_is_one_whole_sentence() {
        let zones: Vec<String> = (0..30).map(|i| format!("us-central1-{i}")).collect();
        let regions = vec!["us-central1".to_owned()];
        let pool = "pool_99jgqgtftv4pq1gp4pq395kzas";
        let few = not_a_location("mars-central1", pool, &zones[..3], &regions);
        assert!(few.ends_with("zones (us-central1-0, us-central1-1, us-central1-2)"), "{few}");
        let many = not_a_location("mars-central1", pool, &zones, &regions);
        assert!(many.ends_with("regions (us-central1) or one of their 30 zones"), "{many}");
        assert!(few.len() <= 200 && many.len() <= 200, "never cut");
    }

    #[test]
    fn a_zone_is_in_the_region_before_its_last_dash() {
        assert_eq!(region_of_zone("us-central1-a"), "us-central1");
        assert_eq!(region_of_zone("europe-west1-b"), "europe-west1");
        let zones: Vec<String> = ["us-central1-a", "us-central1-b", "europe-west1-b"].map(String::from).to_vec();
        assert_eq!(zones_and_regions("gke", &zones).1, ["us-central1", "europe-west1"]);
        let regions: Vec<String> = vec!["nyc3".into()];
        assert_eq!(zones_and_regions("digitalocean", &regions), (vec![], regions.clone()));
    }
}
