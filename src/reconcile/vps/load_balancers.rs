//! The `provider-load-balancer` kind of the `vps.provider-resources` reconciler: one pass per
//! load balancer reads the row (desired), computes what it should be from the tenant's rows
//! (`load_balancer_spec`), reads the provider's load balancer (observed), takes at most one
//! provider step and records what it saw.
//!
//! Steps: wait until the certificates it names are ready (the provider is asked only then);
//! create it under its deterministic name `bc-lb-<24 of the id>` (a pass that crashed after the
//! provider accepted finds it by that name instead of making a second one); replace it whole
//! (DigitalOcean's PUT is a full representation) when any part differs, the machines it reaches
//! included; `ready` with its addresses once the provider reports it active. The settled pass
//! (5 minutes) recomputes the machines, so an instance that gained a machine is added within
//! five minutes; an instance's delete wakes its load balancers at once. Deletion deletes at the
//! provider, then finishes the row (quota refunded, billing ended).

use std::sync::Arc;
use std::time::Duration;

use super::load_balancer_spec::{Desired, Resolved, desired, differences};
use crate::provider::accounts::DigitalOceanAccounts;
use crate::provider::digitalocean::DigitalOcean;
use crate::provider::{ErrorKind, LoadBalancer, LoadBalancers, ProviderError};
use crate::reconcile::{Backoff, Next, Outcome, Pass, Reconciler, Schedule};
use crate::store::{LOAD_BALANCER_KIND, LoadBalancerObserved, LoadBalancerRow, load_balancer_event, now_micros};

/// The load balancers' reconciler.
#[derive(Debug, Clone)]
pub struct ProviderLoadBalancers {
    /// Account id to DigitalOcean adapter.
    pub accounts: Arc<dyn DigitalOceanAccounts>,
    /// Delays after transient failures.
    pub backoff: Backoff,
    /// Delays after the provider refused a delete (5, 10, 20 minutes ... 6 hours).
    pub delete_backoff: Backoff,
    /// How long a load balancer may stay in a transient state before it counts as stuck.
    pub state_deadline: Duration,
}

impl ProviderLoadBalancers {
    /// The reconciler with the spec's intervals.
    pub fn new(accounts: Arc<dyn DigitalOceanAccounts>) -> Self {
        Self {
            accounts,
            backoff: Backoff::TRANSIENT,
            delete_backoff: Backoff::DELETE,
            state_deadline: Duration::from_secs(3600),
        }
    }
}

#[tonic::async_trait]
impl Reconciler for ProviderLoadBalancers {
    fn kind(&self) -> &'static str {
        LOAD_BALANCER_KIND
    }

    fn schedule(&self) -> Schedule {
        Schedule { backoff: self.backoff, ..Schedule::default() }
    }

    fn state_deadline(&self, state: &str) -> Option<Duration> {
        matches!(state, "pending" | "updating" | "deleting").then_some(self.state_deadline)
    }

    async fn reconcile(&self, pass: &Pass) -> Outcome {
        let lb = match pass.store.load_balancer_fetch(&pass.item.object_id).await {
            Ok(Some(lb)) if lb.deleted_at.is_none() => lb,
            Ok(_) => return Next::Remove.into(),
            Err(error) => return Outcome::transient(error.to_string()),
        };
        let provider = match self.accounts.digitalocean(&lb.account_id).await {
            Ok(provider) => provider,
            Err(error) => return Outcome::transient(error.to_string()),
        };
        let step = Step { pass, lb: &lb, provider: &provider, delete_backoff: self.delete_backoff };
        if lb.delete_requested_at.is_some() { step.delete().await } else { step.converge().await }
    }
}

/// One pass over one load balancer.
struct Step<'a> {
    pass: &'a Pass,
    lb: &'a LoadBalancerRow,
    provider: &'a DigitalOcean,
    delete_backoff: Backoff,
}

impl Step<'_> {
    /// An observation that keeps everything as it was.
    fn unchanged(&self) -> LoadBalancerObserved {
        let lb = self.lb;
        LoadBalancerObserved {
            version: lb.version,
            state: lb.state.clone(),
            message: lb.message.clone(),
            provider_id: lb.provider_id.clone(),
            address: lb.address.clone(),
            address_v6: lb.address_v6.clone(),
            reached_ids: lb.reached_ids.clone(),
            ready_once: lb.ready_once,
            events: Vec::new(),
        }
    }

    /// The state while the provider is not done: `updating` once it was ready, and for a
    /// change the tenant made (the update answered `updating`: it stays so until the provider
    /// applied it, even on a load balancer the provider has not yet activated); else `pending`.
    fn busy(&self) -> &'static str {
        if self.lb.ready_once || self.lb.state == "updating" { "updating" } else { "pending" }
    }

    /// Writes the observation (with an `error` event when the load balancer newly fails) and
    /// returns `outcome` in the observed state.
    async fn record(&self, mut observed: LoadBalancerObserved, outcome: Outcome) -> Outcome {
        let now = now_micros();
        if observed.state == "error" && (self.lb.state != "error" || self.lb.message != observed.message) {
            let mut failed = self.lb.clone();
            failed.state = "error".into();
            observed.events.push(load_balancer_event(
                "error",
                &failed,
                now,
                serde_json::json!({"message": observed.message}),
            ));
        }
        let state = observed.state.clone();
        match self.pass.store.load_balancer_observe(&self.lb.id, &observed, now).await {
            // Not written: the tenant changed it meanwhile and its write queued a pass.
            Ok(_) => outcome.in_state(state),
            Err(error) => Outcome::transient(format!("recording the load balancer failed: {error}")),
        }
    }

    /// Fails the load balancer with `message` until something changes.
    async fn fail(&self, message: String) -> Outcome {
        let observed = LoadBalancerObserved { state: "error".into(), message: message.clone(), ..self.unchanged() };
        self.record(observed, Outcome::permanent(message)).await
    }

    /// The provider's load balancer: by its recorded id, else by its deterministic name (a pass
    /// that crashed after the provider accepted it).
    async fn find(&self) -> Result<Option<LoadBalancer>, ProviderError> {
        if !self.lb.provider_id.is_empty() {
            return match self.provider.load_balancer_get(&self.lb.provider_id).await {
                Ok(remote) => Ok(Some(remote)),
                Err(error) if error.is_not_found() => Ok(None),
                Err(error) => Err(error),
            };
        }
        let name = self.lb.provider_name();
        Ok(self.provider.load_balancer_list().await?.into_iter().find(|lb| lb.name == name))
    }

    async fn delete(&self) -> Outcome {
        let remote = match self.find().await {
            Ok(Some(remote)) => remote,
            Ok(None) => return self.finish_delete().await,
            Err(error) => return Outcome::transient(error.to_string()),
        };
        match self.provider.load_balancer_delete(&remote.id).await {
            Ok(()) => self.finish_delete().await,
            Err(error) if error.is_not_found() => self.finish_delete().await,
            Err(error) if error.kind == ErrorKind::Transient => Outcome::transient(error.to_string()),
            Err(error) => {
                // Refused: `error` with the provider's words, retried on the delete backoff (a
                // new delete call retries at once).
                let observed = LoadBalancerObserved {
                    state: "error".into(),
                    message: format!("the provider refused to delete the load balancer: {}", error.message),
                    ..self.unchanged()
                };
                let retry = Next::Retry { error: error.to_string(), backoff: self.delete_backoff };
                self.record(observed, retry.into()).await
            }
        }
    }

    async fn finish_delete(&self) -> Outcome {
        match self.pass.store.load_balancer_finish_delete(&self.lb.id, now_micros()).await {
            Ok(()) => Next::Remove.into(),
            Err(error) => Outcome::transient(error.to_string()),
        }
    }

    /// A refused provider call: `error` with the provider's words when the refusal is
    /// permanent, a retry when it is transient.
    async fn refused(&self, what: &str, error: ProviderError) -> Outcome {
        match error.kind {
            ErrorKind::Transient | ErrorKind::ConflictInProgress => Outcome::transient(error.to_string()),
            _ => self.fail(format!("the provider refused {what}: {}", error.message)).await,
        }
    }

    async fn converge(&self) -> Outcome {
        let wanted = match desired(&self.pass.store, self.lb).await {
            Ok(Resolved::Ready(wanted)) => wanted,
            Ok(Resolved::Wait(why)) => {
                tracing::debug!(load_balancer = %self.lb.id, why, "waiting before asking the provider");
                let observed =
                    LoadBalancerObserved { state: self.busy().into(), message: String::new(), ..self.unchanged() };
                return self.record(observed, Outcome::converging()).await;
            }
            Ok(Resolved::Fail(why)) => return self.fail(why).await,
            Err(error) => return Outcome::transient(error.to_string()),
        };
        let remote = match self.find().await {
            Ok(remote) => remote,
            Err(error) => return Outcome::transient(error.to_string()),
        };
        let Some(remote) = remote else { return self.create(&wanted).await };
        let changed = differences(&wanted.spec, &remote.spec);
        let remote = if changed.is_empty() {
            remote
        } else {
            match self.provider.load_balancer_update(&remote.id, &wanted.spec).await {
                Ok(updated) => updated,
                Err(error) => return self.refused("the change", error).await,
            }
        };
        self.observe(&wanted, &remote, &changed).await
    }

    async fn create(&self, wanted: &Desired) -> Outcome {
        match self.provider.load_balancer_create(&wanted.spec).await {
            Ok(remote) => {
                let observed = LoadBalancerObserved {
                    state: self.busy().into(),
                    message: String::new(),
                    provider_id: remote.id.clone(),
                    reached_ids: wanted.reached_ids.clone(),
                    ..self.unchanged()
                };
                self.record(observed, Outcome::converging()).await
            }
            Err(error) => self.refused("the load balancer", error).await,
        }
    }

    /// Records what the provider reports: `ready` with the addresses once active, publishing
    /// `ready` the first time and `updated` (with what changed) when a change was applied.
    async fn observe(&self, wanted: &Desired, remote: &LoadBalancer, changed: &[&str]) -> Outcome {
        let lb = self.lb;
        let now = now_micros();
        let mut observed = LoadBalancerObserved {
            provider_id: remote.id.clone(),
            reached_ids: wanted.reached_ids.clone(),
            address: remote.ip.clone(),
            address_v6: remote.ipv6.clone(),
            message: String::new(),
            ..self.unchanged()
        };
        match remote.status.as_str() {
            "active" if !remote.ip.is_empty() => {}
            "errored" => {
                return self.fail("the provider reports the load balancer errored".to_owned()).await;
            }
            _ => {
                observed.state = self.busy().into();
                return self.record(observed, Outcome::converging()).await;
            }
        }
        observed.state = "ready".into();
        let mut ready = lb.clone();
        ready.state = "ready".into();
        let addresses = serde_json::json!({"address": remote.ip, "addressV6": remote.ipv6});
        if !lb.ready_once {
            observed.ready_once = true;
            observed.events.push(load_balancer_event("ready", &ready, now, addresses));
        } else if !changed.is_empty() || lb.state != "ready" {
            let mut data = addresses;
            data["changed"] = serde_json::json!(changed);
            data["reachedIds"] = serde_json::json!(wanted.reached_ids);
            observed.events.push(load_balancer_event("updated", &ready, now, data));
        }
        self.record(observed, Outcome::settled()).await
    }
}
