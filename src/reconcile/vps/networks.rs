//! Networks at the provider. On a GKE account a network is a Compute Engine custom-mode network
//! `bc-n-<24 of the id>` with one subnetwork `bc-s-<24 of the subnet id>` per subnet; on a
//! DigitalOcean account each subnet is a VPC `bc-s-...` in its region (the network itself has
//! nothing at the provider). A pass takes the steps that are due (creates are idempotent: an
//! existing name is the work of an earlier pass), then records what it saw: `provisioning`
//! while anything is being made, `ready` once every subnet exists. Deletion removes the subnets
//! first, then the network, then finishes the row.

use std::collections::HashMap;
use std::sync::Arc;

use super::ProviderResources;
use crate::domain::lifecycle_events::LifecycleEvent;
use crate::domain::states::ProvisionState;
use crate::provider::digitalocean::DigitalOcean;
use crate::provider::gce::Gce;
use crate::provider::{ErrorKind, Found, NetworkSpec, Networks, ProviderError};
use crate::reconcile::{Context, KitReconciler, Outcome, Pass, PassError, Timings, refusal};
use crate::store::{NetworkObserved, NetworkRow, Store, SubnetObserved, SubnetRow, network_event, now_micros};

/// The networks' reconciler.
#[derive(Debug, Clone)]
pub struct NetworkReconciler(pub(super) Arc<ProviderResources>);

#[tonic::async_trait]
impl KitReconciler for NetworkReconciler {
    type Row = NetworkRow;

    fn timings(&self) -> Timings {
        self.0.timings
    }

    async fn reconcile(&self, pass: &Pass, network: NetworkRow) -> Result<Outcome, PassError> {
        let step = Step { pass, network: &network, shared: &self.0 };
        let deleting = network.delete_requested_at.is_some();
        match network.provider.as_str() {
            "gke" => {
                let region = network.subnets.first().map(|s| s.region.clone()).unwrap_or_default();
                let gce = self.0.gke.gke(&network.account_id, &region).await?.compute();
                if deleting { step.gce_delete(&gce).await } else { step.gce_converge(&gce).await }
            }
            "digitalocean" => {
                let adapter = self.0.digitalocean.digitalocean(&network.account_id).await?;
                if deleting { step.vpc_delete(&adapter).await } else { step.vpc_converge(&adapter).await }
            }
            other => Err(PassError::invalid(format!("networks on {other} accounts are not supported"))),
        }
    }
}

/// One pass over one network.
struct Step<'a> {
    pass: &'a Pass,
    network: &'a NetworkRow,
    shared: &'a ProviderResources,
}

/// What a pass saw of one subnet.
enum Seen {
    /// It exists, under this provider id.
    Ready(String),
    /// It is being made (or removed).
    Busy,
    /// The provider refused it.
    Failed(String),
    /// It is gone (deletion).
    Gone,
}

fn subnet_name(subnet: &SubnetRow) -> String {
    crate::changes::vps::subnet_name(&subnet.id)
}

impl Step<'_> {
    fn network_name(&self) -> String {
        crate::changes::vps::network_name(&self.network.id)
    }

    /// Records what the pass saw of every subnet, with the network's state and events: `error`
    /// if a subnet failed, `ready` when all exist, else `busy`.
    async fn record(
        &self,
        seen: Vec<(&SubnetRow, Seen)>,
        busy: ProvisionState,
        outcome: Option<Outcome>,
    ) -> Result<Outcome, PassError> {
        let network = self.network;
        let now = now_micros();
        let mut observed = NetworkObserved {
            version: network.version,
            state: network.state,
            message: String::new(),
            provider_id: if network.provider == "gke" { self.network_name() } else { String::new() },
            subnets: Vec::new(),
            events: Vec::new(),
        };
        let mut failed = Vec::new();
        let mut all_ready = true;
        for (subnet, seen) in seen {
            let (state, message, provider_id) = match seen {
                Seen::Ready(id) => (ProvisionState::Ready, String::new(), id),
                Seen::Busy => {
                    all_ready = false;
                    (
                        if subnet.state == ProvisionState::Deleting {
                            ProvisionState::Deleting
                        } else {
                            ProvisionState::Pending
                        },
                        String::new(),
                        subnet.provider_id.clone(),
                    )
                }
                Seen::Failed(message) => {
                    all_ready = false;
                    failed.push(format!("subnet {:?}: {message}", subnet.name));
                    (ProvisionState::Error, message, subnet.provider_id.clone())
                }
                Seen::Gone => (ProvisionState::Deleting, String::new(), String::new()),
            };
            observed.subnets.push(SubnetObserved { id: subnet.id.clone(), state, message, provider_id });
        }
        let outcome = if !failed.is_empty() {
            observed.state = ProvisionState::Error;
            observed.message = failed.join("; ");
            outcome.unwrap_or_else(|| Outcome::permanent(observed.message.clone()))
        } else if all_ready && busy != ProvisionState::Deleting {
            observed.state = ProvisionState::Ready;
            outcome.unwrap_or_else(Outcome::settled)
        } else {
            observed.state = busy;
            outcome.unwrap_or_else(Outcome::converging)
        };
        let mut after = network.clone();
        after.state = observed.state;
        observed.events.extend(network.failure_event(observed.state, &observed.message, now));
        if observed.state == ProvisionState::Ready && network.state != ProvisionState::Ready {
            let subnets: Vec<serde_json::Value> = observed
                .subnets
                .iter()
                .map(|s| serde_json::json!({"subnetId": s.id, "providerId": s.provider_id}))
                .collect();
            observed.events.push(network_event(
                LifecycleEvent::Ready,
                &after,
                now,
                serde_json::json!({"subnets": subnets}),
            ));
        }
        let state = observed.state;
        self.pass.store.network_observe(&network.id, &observed, now).await.context("recording the network failed")?;
        Ok(outcome.in_state(state))
    }

    /// A refused delete: `error` with the provider's words, retried on the delete backoff.
    async fn refused(&self, error: ProviderError) -> Result<Outcome, PassError> {
        let error = refusal(error)?;
        let now = now_micros();
        let message = format!("the provider refused to delete the network: {}", error.message);
        let mut after = self.network.clone();
        after.state = ProvisionState::Error;
        let mut observed = NetworkObserved {
            version: self.network.version,
            state: ProvisionState::Error,
            message: message.clone(),
            provider_id: self.network.provider_id.clone(),
            subnets: Vec::new(),
            events: Vec::new(),
        };
        if self.network.state != ProvisionState::Error || self.network.message != message {
            observed.events.push(network_event(
                LifecycleEvent::Error,
                &after,
                now,
                serde_json::json!({"message": message}),
            ));
        }
        let observing = self.pass.store.network_observe(&self.network.id, &observed, now);
        observing.await.context("recording the network failed")?;
        Ok(Outcome::retry(error.to_string(), self.shared.timings.delete_backoff).in_state(ProvisionState::Error))
    }

    async fn finish_delete(&self) -> Result<Outcome, PassError> {
        self.shared.objects().confirm_gone(self.network).await?;
        self.pass.store.network_finish_delete(&self.network.id, now_micros()).await?;
        Ok(Outcome::remove())
    }

    /// GKE: the network, then each subnetwork.
    async fn gce_converge(&self, gce: &Gce) -> Result<Outcome, PassError> {
        let name = self.network_name();
        if gce.network_get(&name).await.found()?.is_none() {
            let seen = self.network.subnets.iter().map(|s| (s, Seen::Busy)).collect();
            return match gce.network_create(&name, &self.network.description).await {
                Ok(op) if op.error.is_some() => {
                    let message = op.error.unwrap_or_default();
                    let seen = self.network.subnets.iter().map(|s| (s, Seen::Failed(message.clone()))).collect();
                    self.record(seen, ProvisionState::Provisioning, None).await
                }
                Ok(_) => self.record(seen, ProvisionState::Provisioning, None).await,
                Err(error) if error.status == Some(409) => self.record(seen, ProvisionState::Provisioning, None).await,
                Err(error) => self.create_failed(error).await,
            };
        }
        let mut seen = Vec::new();
        for subnet in &self.network.subnets {
            let subnetwork = subnet_name(subnet);
            let state = if gce.subnetwork_get(&subnet.region, &subnetwork).await.found()?.is_some() {
                Seen::Ready(subnetwork)
            } else {
                match gce.subnetwork_create(&subnet.region, &subnetwork, &name, &subnet.ip_range).await {
                    Ok(op) => op.error.map_or(Seen::Busy, Seen::Failed),
                    Err(error) if error.status == Some(409) => Seen::Busy,
                    Err(error) => create_refused(error)?,
                }
            };
            seen.push((subnet, state));
        }
        self.record(seen, ProvisionState::Provisioning, None).await
    }

    /// The network's create was refused: `error` (permanent), or wait for the operation that runs.
    async fn create_failed(&self, error: ProviderError) -> Result<Outcome, PassError> {
        if error.kind == ErrorKind::ConflictInProgress {
            return Ok(Outcome::converging().in_state(ProvisionState::Provisioning));
        }
        let error = refusal(error)?;
        let seen = self.network.subnets.iter().map(|s| (s, Seen::Failed(error.message.clone()))).collect();
        self.record(seen, ProvisionState::Provisioning, Some(Outcome::permanent(error.to_string()))).await
    }

    /// GKE: each subnetwork, then the network, then the row.
    async fn gce_delete(&self, gce: &Gce) -> Result<Outcome, PassError> {
        let mut seen = Vec::new();
        for subnet in &self.network.subnets {
            let subnetwork = subnet_name(subnet);
            let state = if gce.subnetwork_get(&subnet.region, &subnetwork).await.found()?.is_none() {
                Seen::Gone
            } else {
                match gce.subnetwork_delete(&subnet.region, &subnetwork).await.found() {
                    Ok(Some(_)) => Seen::Busy,
                    Ok(None) => Seen::Gone,
                    Err(error) if error.kind == ErrorKind::ConflictInProgress => Seen::Busy,
                    Err(error) => return self.refused(error).await,
                }
            };
            seen.push((subnet, state));
        }
        if seen.iter().any(|(_, s)| !matches!(s, Seen::Gone)) {
            return self.record(seen, ProvisionState::Deleting, None).await;
        }
        let name = self.network_name();
        if gce.network_get(&name).await.found()?.is_none() {
            return self.finish_delete().await;
        }
        match gce.network_delete(&name).await.found() {
            Ok(None) => self.finish_delete().await,
            Ok(Some(_)) => self.record(seen, ProvisionState::Deleting, None).await,
            Err(error) if error.kind == ErrorKind::ConflictInProgress => {
                self.record(seen, ProvisionState::Deleting, None).await
            }
            Err(error) => self.refused(error).await,
        }
    }

    /// DigitalOcean: one VPC per subnet, found by its id or, after a crashed pass, by its name.
    async fn vpc_converge(&self, adapter: &DigitalOcean) -> Result<Outcome, PassError> {
        let existing = vpcs(adapter).await?;
        let mut seen = Vec::new();
        for subnet in &self.network.subnets {
            let name = subnet_name(subnet);
            let state = match existing.get(&name) {
                Some(id) => Seen::Ready(id.clone()),
                None => {
                    let spec = NetworkSpec {
                        name: name.clone(),
                        region: subnet.region.clone(),
                        ip_range: subnet.ip_range.clone(),
                        description: format!("better-compute network {} subnet {}", self.network.name, subnet.name),
                    };
                    match adapter.network_create(&spec).await {
                        Ok(vpc) => Seen::Ready(vpc.id),
                        Err(error) => create_refused(error)?,
                    }
                }
            };
            seen.push((subnet, state));
        }
        self.record(seen, ProvisionState::Provisioning, None).await
    }

    /// DigitalOcean: deletes each subnet's VPC (refused while members remain), then the row.
    async fn vpc_delete(&self, adapter: &DigitalOcean) -> Result<Outcome, PassError> {
        let existing = vpcs(adapter).await?;
        for subnet in &self.network.subnets {
            if let Some(id) = existing.get(&subnet_name(subnet))
                && let Err(error) = adapter.network_delete(id).await.found()
            {
                return self.refused(error).await;
            }
        }
        self.finish_delete().await
    }
}

/// A subnet's refused create: busy while another operation runs, failed when refused, else the
/// pass's failure.
fn create_refused(error: ProviderError) -> Result<Seen, PassError> {
    if error.kind == ErrorKind::ConflictInProgress {
        return Ok(Seen::Busy);
    }
    Ok(Seen::Failed(refusal(error)?.message))
}

/// The account's VPCs, name to id.
async fn vpcs(adapter: &DigitalOcean) -> Result<HashMap<String, String>, ProviderError> {
    Ok(adapter.network_list().await?.into_iter().map(|vpc| (vpc.name, vpc.id)).collect())
}

/// The provider names a cluster on tenant network `network_id` at `location` uses: the Compute
/// Engine network and the subnetwork of its first ready subnet (by name) in the location's
/// region. The service checked both when the cluster was made; a network that has changed since
/// is a failure of the pass.
pub async fn cluster_network(store: &Store, network_id: &str, location: &str) -> Result<(String, String), PassError> {
    let network = match store.network_fetch(network_id).await? {
        Some(network) if network.deleted_at.is_none() => network,
        _ => return Err(PassError::not_found(format!("network {network_id} is gone"))),
    };
    let in_location = |s: &&SubnetRow| location == s.region || location.starts_with(&format!("{}-", s.region));
    let mut subnets: Vec<&SubnetRow> =
        network.subnets.iter().filter(in_location).filter(|s| s.state == ProvisionState::Ready).collect();
    subnets.sort_by(|a, b| a.name.cmp(&b.name));
    match subnets.first() {
        Some(subnet) => Ok((crate::changes::vps::network_name(&network.id), subnet_name(subnet))),
        None => Err(PassError::invalid(format!("network {network_id} has no ready subnet in {location}"))),
    }
}
