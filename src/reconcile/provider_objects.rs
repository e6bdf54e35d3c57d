//! The one map from a provider object as delete plans name it (provider, kind, name, and where
//! it lives) to its lookup and its delete at the account's adapter. The orphan sweeper removes
//! orphans through it, and a normal delete confirms through it that nothing of its plan is left
//! before the resource ends `deleted`, so both look for the same objects the same way.

use std::ops::Deref;
use std::sync::Arc;

use super::{Failure, PassError};
use crate::changes::deletes::Deletable;
use crate::store::ResourceMeta;

use crate::provider::accounts::{DigitalOceanAccounts, GkeAccounts};
use crate::provider::digitalocean::DigitalOcean;
use crate::provider::gke::Gke;
use crate::provider::{
    Certificates, ErrorKind, Found, Instances, LoadBalancers, ManagedKubernetes, Networks, ProviderError,
    ProviderResult, Volumes,
};

/// One provider object: as a delete plan names it, and where it lives.
#[derive(Clone, Copy, Debug)]
pub struct ObjectRef<'a> {
    /// `gke`, `gce` or `digitalocean`.
    pub provider: &'a str,
    /// The provider's kind of object (`cluster`, `node pool`, `network`, `subnetwork`, `vpc`,
    /// `droplet`, `volume`, `certificate`, `load balancer`).
    pub kind: &'a str,
    /// Its name (a node pool's is `cluster/pool`; a droplet's is its tag).
    pub name: &'a str,
    /// Its location or region, where the provider's API needs one.
    pub location: &'a str,
    /// The provider account.
    pub account_id: &'a str,
}

impl ObjectRef<'_> {
    /// The object in words: `the GKE cluster bc-k-...`.
    pub fn describe(&self) -> String {
        let provider = match self.provider {
            "gke" => "GKE",
            "gce" => "Compute Engine",
            "digitalocean" => "DigitalOcean",
            other => other,
        };
        format!("the {provider} {} {}", self.kind, self.name)
    }
}

/// The accounts' adapters the map calls: a reconciler of one provider's kind has that
/// provider's only (its plans name nothing else); the sweeper has both.
#[derive(Clone, Debug, Default)]
pub struct ProviderObjects {
    /// Account id to GKE (and Compute Engine) adapter.
    pub gke: Option<Arc<dyn GkeAccounts>>,
    /// Account id to DigitalOcean adapter.
    pub digitalocean: Option<Arc<dyn DigitalOceanAccounts>>,
}

/// The refusal of an object the map does not know.
fn unknown(object: &ObjectRef<'_>) -> ProviderError {
    ProviderError::new(
        ErrorKind::Permanent,
        "orphans",
        format!(
            "no lookup is known for {} (provider {:?}, kind {:?})",
            object.describe(),
            object.provider,
            object.kind
        ),
    )
}

/// A delete that found nothing, or that another operation on the object holds up (GKE takes
/// one at a time; the object's own delete is likely that operation), is no failure.
fn accepted(result: ProviderResult<()>) -> ProviderResult<()> {
    match result {
        Err(error) if error.is_not_found() || error.kind == ErrorKind::ConflictInProgress => Ok(()),
        other => other,
    }
}

impl ProviderObjects {
    /// The map over both providers' accounts.
    pub fn new(gke: Arc<dyn GkeAccounts>, digitalocean: Arc<dyn DigitalOceanAccounts>) -> Self {
        Self { gke: Some(gke), digitalocean: Some(digitalocean) }
    }

    /// The GKE adapter of `object`'s account at its location.
    async fn gke(&self, object: &ObjectRef<'_>) -> ProviderResult<Gke> {
        let accounts = self.gke.as_ref().ok_or_else(|| unknown(object))?;
        accounts.gke(object.account_id, object.location).await
    }

    /// The DigitalOcean adapter of `object`'s account.
    async fn digitalocean(&self, object: &ObjectRef<'_>) -> ProviderResult<DigitalOcean> {
        let accounts = self.digitalocean.as_ref().ok_or_else(|| unknown(object))?;
        accounts.digitalocean(object.account_id).await
    }

    /// Whether `object` is still there: its id at the provider, `None` once it is gone.
    pub async fn lookup(&self, object: &ObjectRef<'_>) -> ProviderResult<Option<String>> {
        let name = object.name;
        match (object.provider, object.kind) {
            ("gke", "cluster") => {
                let gke = self.gke(object).await?;
                Ok(gke.cluster_get(name).await.found()?.map(|cluster| cluster.name))
            }
            ("gke", "node pool") => {
                let (cluster, pool) = name.split_once('/').ok_or_else(|| unknown(object))?;
                let gke = self.gke(object).await?;
                Ok(gke.node_pool_get(cluster, pool).await.found()?.map(|pool| pool.name))
            }
            ("gce", "network") => {
                let gce = self.gke(object).await?.compute();
                Ok(gce.network_get(name).await.found()?.map(|network| network.self_link))
            }
            ("gce", "subnetwork") => {
                let gce = self.gke(object).await?.compute();
                Ok(gce.subnetwork_get(object.location, name).await.found()?.map(|subnetwork| subnetwork.name))
            }
            ("digitalocean", kind) => {
                let adapter = self.digitalocean(object).await?;
                match kind {
                    "vpc" => Ok(adapter.network_list().await?.into_iter().find(|v| v.name == name).map(|v| v.id)),
                    "droplet" => Ok(adapter.instance_list(name).await?.first().map(|d| d.id.to_string())),
                    "volume" => Ok(adapter.volume_find(name, object.location).await?.map(|v| v.id)),
                    "certificate" => {
                        Ok(adapter.certificate_list().await?.into_iter().find(|c| c.name == name).map(|c| c.id))
                    }
                    "load balancer" => {
                        Ok(adapter.load_balancer_list().await?.into_iter().find(|lb| lb.name == name).map(|lb| lb.id))
                    }
                    _ => Err(unknown(object)),
                }
            }
            _ => Err(unknown(object)),
        }
    }

    /// Asks the provider to delete `object`; one already gone, or whose delete is under way,
    /// is accepted. The provider may take time: [`ProviderObjects::lookup`] says when it is gone.
    pub async fn delete(&self, object: &ObjectRef<'_>) -> ProviderResult<()> {
        let name = object.name;
        match (object.provider, object.kind) {
            ("gke", "cluster") => {
                let gke = self.gke(object).await?;
                accepted(gke.cluster_delete(name).await.map(drop))
            }
            ("gke", "node pool") => {
                let (cluster, pool) = name.split_once('/').ok_or_else(|| unknown(object))?;
                let gke = self.gke(object).await?;
                accepted(gke.node_pool_delete(cluster, pool).await.map(drop))
            }
            ("gce", "network") => {
                let gce = self.gke(object).await?.compute();
                accepted(gce.network_delete(name).await.map(drop))
            }
            ("gce", "subnetwork") => {
                let gce = self.gke(object).await?.compute();
                accepted(gce.subnetwork_delete(object.location, name).await.map(drop))
            }
            ("digitalocean", kind) => {
                let adapter = self.digitalocean(object).await?;
                if kind == "droplet" {
                    for droplet in adapter.instance_list(name).await? {
                        accepted(adapter.instance_delete(droplet.id).await)?;
                    }
                    return Ok(());
                }
                let Some(id) = self.lookup(object).await? else { return Ok(()) };
                accepted(match kind {
                    "vpc" => adapter.network_delete(&id).await,
                    "volume" => adapter.volume_delete(&id).await,
                    "certificate" => adapter.certificate_delete(&id).await,
                    "load balancer" => adapter.load_balancer_delete(&id).await,
                    _ => Err(unknown(object)),
                })
            }
            _ => Err(unknown(object)),
        }
    }
}

impl ProviderObjects {
    /// Confirms at the provider, before `row` ends `deleted`, that no object of its delete plan
    /// is left: for one still there, its delete is asked again and the pass fails (transient,
    /// on the kind's backoff) naming it, so the resource stays `deleting` instead of ending
    /// `deleted` over something left behind.
    pub async fn confirm_gone<R, S>(&self, row: &R) -> Result<(), PassError>
    where
        R: Deletable + Deref<Target = ResourceMeta<S>>,
    {
        for (object, placement) in row.provider_objects() {
            let object = ObjectRef {
                provider: object.provider,
                kind: object.kind,
                name: &object.name,
                location: &placement.location,
                account_id: &row.account_id,
            };
            if self.lookup(&object).await?.is_some() {
                self.delete(&object).await?;
                return Err(PassError::new(
                    Failure::Unavailable,
                    format!("{} is still there after its delete", object.describe()),
                ));
            }
        }
        Ok(())
    }
}
