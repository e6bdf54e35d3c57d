//! Instances at the provider: one DigitalOcean droplet each, tagged `bc-i-<24 of the id>` (and
//! `better-compute`) so a pass that crashed after the create finds it by tag. The droplet's id
//! is recorded as the instance's machine the moment the provider answers. An instance on a
//! subnet waits until the subnet's VPC exists. `ready` once the droplet is `active`, with its
//! addresses. Deletion destroys the droplet, waits until it is gone, then finishes the row.

use std::sync::Arc;
use std::time::Duration;

use super::{ProviderResources, provider_name};
use crate::provider::digitalocean::DigitalOcean;
use crate::provider::{ErrorKind, Instance, InstanceSpec, Instances, ProviderError};
use crate::reconcile::{Next, Outcome, Pass, Reconciler, Schedule};
use crate::store::{INSTANCE_KIND, InstanceObserved, InstanceRow, instance_event, now_micros};

/// The tag every droplet of better-compute carries.
pub const INSTANCE_TAG: &str = "better-compute";

/// The instances' reconciler.
#[derive(Debug, Clone)]
pub struct InstanceReconciler(pub(super) Arc<ProviderResources>);

#[tonic::async_trait]
impl Reconciler for InstanceReconciler {
    fn kind(&self) -> &'static str {
        INSTANCE_KIND
    }

    fn schedule(&self) -> Schedule {
        Schedule { backoff: self.0.backoff, ..Schedule::default() }
    }

    fn state_deadline(&self, state: &str) -> Option<Duration> {
        self.0.transient_state(state)
    }

    async fn reconcile(&self, pass: &Pass) -> Outcome {
        let instance = match pass.store.instance_fetch(&pass.item.object_id).await {
            Ok(Some(instance)) if instance.deleted_at.is_none() => instance,
            Ok(_) => return Next::Remove.into(),
            Err(error) => return Outcome::transient(error.to_string()),
        };
        let adapter = match self.0.digitalocean.digitalocean(&instance.account_id).await {
            Ok(adapter) => adapter,
            Err(error) => return Outcome::transient(error.to_string()),
        };
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
        provider_name("bc-i", &self.instance.id)
    }

    /// An observation that keeps everything as it was.
    fn unchanged(&self) -> InstanceObserved {
        let i = self.instance;
        InstanceObserved {
            version: i.version,
            state: i.state.clone(),
            message: i.message.clone(),
            machine_id: i.machine_id.clone(),
            public_ipv4: i.public_ipv4.clone(),
            private_ipv4: i.private_ipv4.clone(),
            events: Vec::new(),
        }
    }

    /// Writes the observation (with an `error` event when the instance newly fails).
    async fn record(&self, mut observed: InstanceObserved, outcome: Outcome) -> Outcome {
        let now = now_micros();
        if observed.state == "error" && (self.instance.state != "error" || self.instance.message != observed.message) {
            let mut failed = self.instance.clone();
            failed.state = "error".into();
            observed.events.push(instance_event(
                "error",
                &failed,
                now,
                serde_json::json!({"message": observed.message}),
            ));
        }
        let state = observed.state.clone();
        match self.pass.store.instance_observe(&self.instance.id, &observed, now).await {
            Ok(_) => outcome.in_state(state),
            Err(error) => Outcome::transient(format!("recording the instance failed: {error}")),
        }
    }

    /// The droplet: by the recorded machine id, else by tag (a crashed pass's create).
    async fn find(&self) -> Result<Option<Instance>, ProviderError> {
        if let Some(id) = self.instance.machine_id.as_deref().and_then(|id| id.parse::<u64>().ok()) {
            return match self.adapter.instance_get(id).await {
                Ok(droplet) => Ok(Some(droplet)),
                Err(error) if error.is_not_found() => Ok(None),
                Err(error) => Err(error),
            };
        }
        Ok(self.adapter.instance_list(&self.tag()).await?.into_iter().next())
    }

    async fn converge(&self) -> Outcome {
        let droplet = match self.find().await {
            Ok(droplet) => droplet,
            Err(error) => return Outcome::transient(error.to_string()),
        };
        let Some(droplet) = droplet else {
            if self.instance.machine_id.is_some() {
                let observed = InstanceObserved {
                    state: "error".into(),
                    message: "the machine is gone at the provider; delete the instance and make another".into(),
                    ..self.unchanged()
                };
                return self.record(observed, Outcome::permanent("the droplet is gone")).await;
            }
            return self.create().await;
        };
        let machine = droplet.id.to_string();
        if self.instance.machine_id.as_deref() != Some(machine.as_str())
            && let Err(error) = self.pass.store.instance_set_machine(&self.instance.id, &machine, now_micros()).await
        {
            return Outcome::transient(error.to_string());
        }
        let mut observed = InstanceObserved {
            machine_id: Some(machine.clone()),
            public_ipv4: droplet.public_ipv4.clone(),
            private_ipv4: droplet.private_ipv4.clone(),
            message: String::new(),
            ..self.unchanged()
        };
        if droplet.status != "active" {
            observed.state = "provisioning".into();
            return self.record(observed, Outcome::converging()).await;
        }
        observed.state = "ready".into();
        if self.instance.state != "ready" {
            let mut ready = self.instance.clone();
            ready.state = "ready".into();
            observed.events.push(instance_event(
                "ready",
                &ready,
                now_micros(),
                serde_json::json!({
                    "machineId": machine, "publicIpv4": droplet.public_ipv4, "privateIpv4": droplet.private_ipv4,
                }),
            ));
        }
        self.record(observed, Outcome::settled()).await
    }

    /// The VPC to create the droplet in: none, the subnet's, or `Err` (wait or fail).
    async fn vpc(&self) -> Result<String, Outcome> {
        let Some(subnet_id) = &self.instance.subnet_id else { return Ok(String::new()) };
        let subnet = match self.pass.store.subnet_fetch(subnet_id).await {
            Ok(Some(subnet)) => subnet,
            Ok(None) => return Err(Outcome::permanent(format!("subnet {subnet_id} is gone"))),
            Err(error) => return Err(Outcome::transient(error.to_string())),
        };
        if subnet.state == "error" {
            let observed = InstanceObserved {
                state: "error".into(),
                message: format!("subnet {:?} is in error: {}", subnet.id, subnet.message),
                ..self.unchanged()
            };
            return Err(self.record(observed, Outcome::permanent("the subnet is in error")).await);
        }
        if subnet.provider_id.is_empty() {
            // The subnet's VPC is still being made: the instance waits for it.
            return Err(Outcome::converging().in_state("pending"));
        }
        Ok(subnet.provider_id)
    }

    async fn create(&self) -> Outcome {
        let vpc_uuid = match self.vpc().await {
            Ok(vpc) => vpc,
            Err(outcome) => return outcome,
        };
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
                if let Err(error) = self.pass.store.instance_set_machine(&i.id, &machine, now_micros()).await {
                    return Outcome::transient(error.to_string());
                }
                let observed = InstanceObserved {
                    state: "provisioning".into(),
                    message: String::new(),
                    machine_id: Some(machine),
                    ..self.unchanged()
                };
                self.record(observed, Outcome::converging()).await
            }
            Err(error) => match error.kind {
                ErrorKind::Transient | ErrorKind::ConflictInProgress => Outcome::transient(error.to_string()),
                _ => {
                    let observed = InstanceObserved {
                        state: "error".into(),
                        message: format!("the provider refused the instance: {}", error.message),
                        ..self.unchanged()
                    };
                    self.record(observed, Outcome::permanent(error.to_string())).await
                }
            },
        }
    }

    async fn delete(&self) -> Outcome {
        let droplet = match self.find().await {
            Ok(droplet) => droplet,
            Err(error) => return Outcome::transient(error.to_string()),
        };
        let Some(droplet) = droplet else {
            return match self.pass.store.instance_finish_delete(&self.instance.id, now_micros()).await {
                Ok(()) => Next::Remove.into(),
                Err(error) => Outcome::transient(error.to_string()),
            };
        };
        match self.adapter.instance_delete(droplet.id).await {
            Ok(()) => Outcome::converging().in_state("deleting"),
            Err(error) if error.is_not_found() => Outcome::converging().in_state("deleting"),
            Err(error) if matches!(error.kind, ErrorKind::Transient | ErrorKind::ConflictInProgress) => {
                Outcome::transient(error.to_string())
            }
            Err(error) => {
                let observed = InstanceObserved {
                    state: "error".into(),
                    message: format!("the provider refused to delete the instance: {}", error.message),
                    ..self.unchanged()
                };
                let retry = Next::Retry { error: error.to_string(), backoff: self.shared.delete_backoff };
                self.record(observed, retry.into()).await
            }
        }
    }
}
