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
//!
//! Drift (see [`crate::domain::drift`]): on a pass over a `ready` load balancer whose machines
//! and targets are those last applied (its desired state applied and unchanged since), the parts the
//! provider holds differently (a forwarding rule added by hand) are drift. The pool's
//! `drift: correct` puts them back with the usual PUT; `drift: report` sends nothing while only
//! drift differs, and the drift stays on the view until the provider changes back or the
//! tenant changes the load balancer (which makes it `updating`: the new spec is applied whole).

use crate::domain::lifecycle_events::LifecycleEvent;
use crate::domain::states::LoadBalancerState;
use std::sync::Arc;

use crate::changes::load_balancer_spec::{Desired, Resolved, desired, differences, drifted_parts};
use crate::domain::drift;
use crate::provider::accounts::DigitalOceanAccounts;
use crate::provider::digitalocean::DigitalOcean;
use crate::provider::{Found, LoadBalancer, LoadBalancers, ProviderError};
use crate::reconcile::provider_objects::ProviderObjects;
use crate::reconcile::{Backoff, Context, KitReconciler, Outcome, Pass, PassError, Timings, refusal};
use crate::store::{LoadBalancerObserved, LoadBalancerRow, load_balancer_event, now_micros};

/// The load balancers' reconciler.
#[derive(Debug, Clone)]
pub struct ProviderLoadBalancers {
    /// Account id to DigitalOcean adapter.
    pub accounts: Arc<dyn DigitalOceanAccounts>,
    /// Its delays (a refused delete: 5, 10, 20 minutes ... 6 hours) and stuck deadline.
    pub timings: Timings,
}

#[tonic::async_trait]
impl KitReconciler for ProviderLoadBalancers {
    type Row = LoadBalancerRow;

    fn timings(&self) -> Timings {
        self.timings
    }

    async fn reconcile(&self, pass: &Pass, lb: LoadBalancerRow) -> Result<Outcome, PassError> {
        let provider = self.accounts.digitalocean(&lb.account_id).await?;
        let objects = ProviderObjects { digitalocean: Some(self.accounts.clone()), gke: None };
        let step = Step { pass, lb: &lb, provider: &provider, delete_backoff: self.timings.delete_backoff, objects };
        if lb.delete_requested_at.is_some() { step.delete().await } else { step.converge().await }
    }
}

/// One pass over one load balancer.
struct Step<'a> {
    pass: &'a Pass,
    lb: &'a LoadBalancerRow,
    provider: &'a DigitalOcean,
    delete_backoff: Backoff,
    objects: ProviderObjects,
}

impl Step<'_> {
    /// An observation that keeps everything as it was.
    fn unchanged(&self) -> LoadBalancerObserved {
        let lb = self.lb;
        LoadBalancerObserved {
            version: lb.version,
            state: lb.state,
            message: lb.message.clone(),
            provider_id: lb.provider_id.clone(),
            address: lb.address.clone(),
            address_v6: lb.address_v6.clone(),
            reached_ids: lb.reached_ids.clone(),
            ready_once: lb.ready_once,
            drift: Vec::new(),
            events: Vec::new(),
        }
    }

    /// The state while the provider is not done: `updating` once it was ready, and for a
    /// change the tenant made (the update answered `updating`: it stays so until the provider
    /// applied it, even on a load balancer the provider has not yet activated); else `pending`.
    fn busy(&self) -> LoadBalancerState {
        let updating = self.lb.ready_once || self.lb.state == LoadBalancerState::Updating;
        if updating { LoadBalancerState::Updating } else { LoadBalancerState::Pending }
    }

    /// Writes the observation (with an `error` event when the load balancer newly fails) and
    /// returns `outcome` in the observed state.
    async fn record(&self, mut observed: LoadBalancerObserved, outcome: Outcome) -> Result<Outcome, PassError> {
        let now = now_micros();
        observed.events.extend(self.lb.failure_event(observed.state, &observed.message, now));
        let state = observed.state;
        // Not written: the tenant changed it meanwhile and its write queued a pass.
        let observing = self.pass.store.load_balancer_observe(&self.lb.id, &observed, now);
        observing.await.context("recording the load balancer failed")?;
        Ok(outcome.in_state(state))
    }

    /// Fails the load balancer with `message` until something changes.
    async fn fail(&self, message: String) -> Result<Outcome, PassError> {
        let observed =
            LoadBalancerObserved { state: LoadBalancerState::Error, message: message.clone(), ..self.unchanged() };
        self.record(observed, Outcome::permanent(message)).await
    }

    /// The provider's load balancer: by its recorded id, else by its deterministic name (a pass
    /// that crashed after the provider accepted it).
    async fn find(&self) -> Result<Option<LoadBalancer>, ProviderError> {
        if !self.lb.provider_id.is_empty() {
            return self.provider.load_balancer_get(&self.lb.provider_id).await.found();
        }
        let name = self.lb.provider_name();
        Ok(self.provider.load_balancer_list().await?.into_iter().find(|lb| lb.name == name))
    }

    async fn delete(&self) -> Result<Outcome, PassError> {
        if let Some(remote) = self.find().await?
            && let Err(error) = self.provider.load_balancer_delete(&remote.id).await.found()
        {
            // Refused: `error` with the provider's words, retried on the delete backoff (a new
            // delete call retries at once).
            let error = refusal(error)?;
            let observed = LoadBalancerObserved {
                state: LoadBalancerState::Error,
                message: format!("the provider refused to delete the load balancer: {}", error.message),
                ..self.unchanged()
            };
            return self.record(observed, Outcome::retry(error.to_string(), self.delete_backoff)).await;
        }
        self.objects.confirm_gone(self.lb).await?;
        self.pass.store.load_balancer_finish_delete(&self.lb.id, now_micros()).await?;
        Ok(Outcome::remove())
    }

    /// A refused provider call: `error` with the provider's words when the refusal is
    /// permanent; the error policy's otherwise.
    async fn refused(&self, what: &str, error: ProviderError) -> Result<Outcome, PassError> {
        let error = refusal(error)?;
        self.fail(format!("the provider refused {what}: {}", error.message)).await
    }

    async fn converge(&self) -> Result<Outcome, PassError> {
        let wanted = match desired(&self.pass.store, self.lb).await? {
            Resolved::Ready(wanted) => wanted,
            Resolved::Wait(why) => {
                tracing::debug!(load_balancer = %self.lb.id, why, "waiting before asking the provider");
                let observed = LoadBalancerObserved { state: self.busy(), message: String::new(), ..self.unchanged() };
                return self.record(observed, Outcome::converging()).await;
            }
            Resolved::Fail(why) => return self.fail(why).await,
        };
        let Some(remote) = self.find().await? else { return self.create(&wanted).await };
        let mut changed = differences(&wanted.spec, &remote.spec);
        let judged = self.judge_drift(&wanted, &remote, &changed).await?;
        if !judged.correct && !judged.drift.is_empty() {
            // Reported: what differs is drift only (see `judge_drift`), left as found.
            changed.clear();
        }
        let remote = if changed.is_empty() {
            remote
        } else {
            match self.provider.load_balancer_update(&remote.id, &wanted.spec).await {
                Ok(updated) => updated,
                Err(error) => return self.refused("the change", error).await,
            }
        };
        self.observe(&wanted, &remote, &changed, judged).await
    }

    /// Judges what differs from the provider (`changed`), when the load balancer is `ready`
    /// and reaches the machines last applied: then nothing of its desired state changed since
    /// it was applied, and every difference is drift (see [`crate::domain::drift`]).
    async fn judge_drift(
        &self,
        wanted: &Desired,
        remote: &LoadBalancer,
        changed: &[&str],
    ) -> Result<drift::Judgement, PassError> {
        let lb = self.lb;
        // The machines it reaches are recomputed from the tenant's instances on every pass, so
        // a difference in them (or in the droplets behind them) is taken as the desired state
        // changing: applied whole, as usual, like any change made with drift.
        let settled = lb.state == LoadBalancerState::Ready
            && wanted.reached_ids == lb.reached_ids
            && !changed.contains(&"targets");
        let differing = if settled { drifted_parts(&wanted.spec, &remote.spec, changed) } else { Vec::new() };
        if differing.is_empty() && lb.drift.is_empty() {
            return Ok(drift::judge(false, Vec::new(), &[], drift::DriftPolicy::Correct, 0));
        }
        let pool = self.pass.store.pool_fetch(&lb.pool_id).await?;
        // A policy the pool's checks let through is readable; were it not, the default holds.
        let policy = drift::read(&pool.policy).unwrap_or_default();
        Ok(drift::judge(settled, differing, &lb.drift, policy, now_micros()))
    }

    async fn create(&self, wanted: &Desired) -> Result<Outcome, PassError> {
        match self.provider.load_balancer_create(&wanted.spec).await {
            Ok(remote) => {
                let observed = LoadBalancerObserved {
                    state: self.busy(),
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
    async fn observe(
        &self,
        wanted: &Desired,
        remote: &LoadBalancer,
        changed: &[&str],
        judged: drift::Judgement,
    ) -> Result<Outcome, PassError> {
        let lb = self.lb;
        let now = now_micros();
        let mut observed = LoadBalancerObserved {
            provider_id: remote.id.clone(),
            reached_ids: wanted.reached_ids.clone(),
            address: remote.ip.clone(),
            address_v6: remote.ipv6.clone(),
            message: String::new(),
            drift: judged.drift,
            ..self.unchanged()
        };
        if let Some(data) = judged.event {
            observed.events.push(load_balancer_event(LifecycleEvent::Drift, lb, now, data));
        }
        match remote.status.as_str() {
            "active" if !remote.ip.is_empty() => {}
            "errored" => {
                return self.fail("the provider reports the load balancer errored".to_owned()).await;
            }
            _ => {
                observed.state = self.busy();
                return self.record(observed, Outcome::converging()).await;
            }
        }
        observed.state = LoadBalancerState::Ready;
        let mut ready = lb.clone();
        ready.state = LoadBalancerState::Ready;
        let addresses = serde_json::json!({"address": remote.ip, "addressV6": remote.ipv6});
        if !lb.ready_once {
            observed.ready_once = true;
            observed.events.push(load_balancer_event(LifecycleEvent::Ready, &ready, now, addresses));
        } else if !changed.is_empty() || lb.state != LoadBalancerState::Ready {
            let mut data = addresses;
            data["changed"] = serde_json::json!(changed);
            data["reachedIds"] = serde_json::json!(wanted.reached_ids);
            observed.events.push(load_balancer_event(LifecycleEvent::Updated, &ready, now, data));
        }
        self.record(observed, Outcome::settled()).await
    }
}
