//! Instances at the provider: one DigitalOcean droplet each, tagged `bc-i-<24 of the id>` (and
//! `better-compute`) so a pass that crashed after the create finds it by tag. The droplet's id
//! is recorded as the instance's machine the moment the provider answers. An instance on a
//! subnet waits until the subnet's VPC exists. `ready` once the droplet is `active`, with its
//! addresses. Deletion destroys the droplet, waits until it is gone, then finishes the row.

use std::sync::Arc;

use super::ProviderResources;
use crate::domain::lifecycle_events::LifecycleEvent;
use crate::domain::states::ProvisionState;
use crate::provider::digitalocean::DigitalOcean;
use crate::provider::{Found, Instance, InstanceSpec, Instances, ProviderError};
use crate::reconcile::{Context, KitReconciler, Outcome, Pass, PassError, Timings, refusal};
use crate::store::{InstanceObserved, InstanceRow, instance_event, now_micros};

/// The tag every droplet of better-compute carries.
pub const INSTANCE_TAG: &str = "better-compute";

/// The instances' reconciler.
#[derive(Debug, Clone)]
pub struct InstanceReconciler(pub(super) Arc<ProviderResources>);

#[tonic::async_trait]
impl KitReconciler for InstanceReconciler {
    type Row = InstanceRow;

    fn timings(&self) -> Timings {
        self.0.timings
    }

    async fn reconcile(&self, pass: &Pass, instance: InstanceRow) -> Result<Outcome, PassError> {
        let adapter = self.0.digitalocean.digitalocean(&instance.account_id).await?;
        let step = Step { pass, instance: &instance, adapter: &adapter, shared: &self.0 };
        if instance.delete_requested_at.is_some() { step.delete().await } else { step.converge().await }
    }
}

/// One pass over one instance.
struct Step<'a> {
    pass: &'a Pass,
    instance: &'a InstanceRow,
    adapter: &'a DigitalOcean,
    shared: &'a ProviderResources,
}

impl Step<'_> {
    fn tag(&self) -> String {
        crate::changes::vps::instance_name(&self.instance.id)
    }

    /// An observation that keeps everything as it was.
    fn unchanged(&self) -> InstanceObserved {
        let i = self.instance;
        InstanceObserved {
            version: i.version,
            state: i.state,
            message: i.message.clone(),
            machine_id: i.machine_id.clone(),
            public_ipv4: i.public_ipv4.clone(),
            private_ipv4: i.private_ipv4.clone(),
            events: Vec::new(),
        }
    }

    /// The instance in `error` with `message`.
    fn failed(&self, message: String) -> InstanceObserved {
        InstanceObserved { state: ProvisionState::Error, message, ..self.unchanged() }
    }

    /// Writes the observation (with an `error` event when the instance newly fails).
    async fn record(&self, mut observed: InstanceObserved, outcome: Outcome) -> Result<Outcome, PassError> {
        let now = now_micros();
        observed.events.extend(self.instance.failure_event(observed.state, &observed.message, now));
        let state = observed.state;
        self.pass
            .store
            .instance_observe(&self.instance.id, &observed, now)
            .await
            .context("recording the instance failed")?;
        Ok(outcome.in_state(state))
    }

    /// The droplet: by the recorded machine id, else by tag (a crashed pass's create).
    async fn find(&self) -> Result<Option<Instance>, ProviderError> {
        if let Some(id) = self.instance.machine_id.as_deref().and_then(|id| id.parse::<u64>().ok()) {
            return self.adapter.instance_get(id).await.found();
        }
        Ok(self.adapter.instance_list(&self.tag()).await?.into_iter().next())
    }

    async fn converge(&self) -> Result<Outcome, PassError> {
        let Some(droplet) = self.find().await? else {
            if self.instance.machine_id.is_some() {
                let gone = "the machine is gone at the provider; delete the instance and make another";
                return self.record(self.failed(gone.into()), Outcome::permanent("the droplet is gone")).await;
            }
            return self.create().await;
        };
        let machine = droplet.id.to_string();
        if self.instance.machine_id.as_deref() != Some(machine.as_str()) {
            self.pass.store.instance_set_machine(&self.instance.id, &machine, now_micros()).await?;
        }
        let mut observed = InstanceObserved {
            machine_id: Some(machine.clone()),
            public_ipv4: droplet.public_ipv4.clone(),
            private_ipv4: droplet.private_ipv4.clone(),
            message: String::new(),
            ..self.unchanged()
        };
        if droplet.status != "active" {
            observed.state = ProvisionState::Provisioning;
            return self.record(observed, Outcome::converging()).await;
        }
        observed.state = ProvisionState::Ready;
        if self.instance.state != ProvisionState::Ready {
            let mut ready = self.instance.clone();
            ready.state = ProvisionState::Ready;
            observed.events.push(instance_event(
                LifecycleEvent::Ready,
                &ready,
                now_micros(),
                serde_json::json!({
                    "machineId": machine, "publicIpv4": droplet.public_ipv4, "privateIpv4": droplet.private_ipv4,
                }),
            ));
        }
        self.record(observed, Outcome::settled()).await
    }

    /// Creates the droplet, in its subnet's VPC once that exists.
    async fn create(&self) -> Result<Outcome, PassError> {
        let mut vpc_uuid = String::new();
        if let Some(subnet_id) = &self.instance.subnet_id {
            let Some(subnet) = self.pass.store.subnet_fetch(subnet_id).await? else {
                return Err(PassError::not_found(format!("subnet {subnet_id} is gone")));
            };
            if subnet.state == ProvisionState::Error {
                let message = format!("subnet {:?} is in error: {}", subnet.id, subnet.message);
                return self.record(self.failed(message), Outcome::permanent("the subnet is in error")).await;
            }
            if subnet.provider_id.is_empty() {
                // The subnet's VPC is still being made: the instance waits for it.
                return Ok(Outcome::converging().in_state(ProvisionState::Pending));
            }
            vpc_uuid = subnet.provider_id;
        }
        let i = self.instance;
        let spec = InstanceSpec {
            name: i.name.clone(),
            region: i.region.clone(),
            size: i.size.clone(),
            image: i.image.clone(),
            vpc_uuid,
            tags: vec![INSTANCE_TAG.to_owned(), self.tag()],
            user_data: String::new(),
        };
        match self.adapter.instance_create(&spec).await {
            Ok(droplet) => {
                let machine = droplet.id.to_string();
                self.pass.store.instance_set_machine(&i.id, &machine, now_micros()).await?;
                let observed = InstanceObserved {
                    state: ProvisionState::Provisioning,
                    message: String::new(),
                    machine_id: Some(machine),
                    ..self.unchanged()
                };
                self.record(observed, Outcome::converging()).await
            }
            Err(error) => {
                let error = refusal(error)?;
                let message = format!("the provider refused the instance: {}", error.message);
                self.record(self.failed(message), Outcome::permanent(error.to_string())).await
            }
        }
    }

    async fn delete(&self) -> Result<Outcome, PassError> {
        let Some(droplet) = self.find().await? else {
            self.shared.objects().confirm_gone(self.instance).await?;
            self.pass.store.instance_finish_delete(&self.instance.id, now_micros()).await?;
            return Ok(Outcome::remove());
        };
        match self.adapter.instance_delete(droplet.id).await.found() {
            Ok(_) => Ok(Outcome::converging().in_state(ProvisionState::Deleting)),
            Err(error) => {
                let error = refusal(error)?;
                let message = format!("the provider refused to delete the instance: {}", error.message);
                let retry = Outcome::retry(error.to_string(), self.shared.timings.delete_backoff);
                self.record(self.failed(message), retry).await
            }
        }
    }
}
