//! Volumes at the provider: one DigitalOcean volume `bc-v-<24 of the id>` each, found by that
//! name in its region when a pass crashed after the create. The provider's id is recorded the
//! moment it answers. Each pass takes the next step towards what the row asks, one action at a
//! time (the provider runs one per volume): wait for an action in progress, grow, detach from a
//! machine that is not the asked one, attach to the asked instance's machine once it has one;
//! `ready` once nothing is left. Deletion detaches it first (the provider refuses to delete an
//! attached volume), then deletes it and finishes the row.

use std::sync::Arc;

use super::ProviderResources;
use crate::domain::lifecycle_events::LifecycleEvent;
use crate::domain::states::VolumeState;
use crate::provider::digitalocean::DigitalOcean;
use crate::provider::{Found, ProviderError, Volume, VolumeChange, VolumeSpec, Volumes};
use crate::reconcile::{Context, KitReconciler, Outcome, Pass, PassError, Timings, refusal};
use crate::store::{VolumeObserved, VolumeRow, now_micros, volume_event};

/// The tag every volume of better-compute carries.
const VOLUME_TAG: &str = "better-compute";

/// The volumes' reconciler.
#[derive(Debug, Clone)]
pub struct VolumeReconciler(pub(super) Arc<ProviderResources>);

#[tonic::async_trait]
impl KitReconciler for VolumeReconciler {
    type Row = VolumeRow;

    fn timings(&self) -> Timings {
        self.0.timings
    }

    async fn reconcile(&self, pass: &Pass, volume: VolumeRow) -> Result<Outcome, PassError> {
        let adapter = self.0.digitalocean.digitalocean(&volume.account_id).await?;
        let step = Step { pass, volume: &volume, adapter: &adapter, shared: &self.0 };
        if volume.delete_requested_at.is_some() { step.delete().await } else { step.converge().await }
    }
}

/// One pass over one volume.
struct Step<'a> {
    pass: &'a Pass,
    volume: &'a VolumeRow,
    adapter: &'a DigitalOcean,
    shared: &'a ProviderResources,
}

/// Where the volume's attachment stands against what the row asks.
enum Attachment {
    /// As asked.
    Done,
    /// The asked instance has no machine yet.
    Waiting,
    /// The next action to take.
    Next(VolumeChange),
}

impl Step<'_> {
    fn name(&self) -> String {
        crate::changes::vps::volume_name(&self.volume.id)
    }

    /// An observation that keeps everything as it was.
    fn unchanged(&self) -> VolumeObserved {
        let v = self.volume;
        VolumeObserved {
            version: v.version,
            state: v.state,
            message: v.message.clone(),
            attached_machine_id: v.attached_machine_id.clone(),
            events: Vec::new(),
        }
    }

    /// The volume in `error` with `message`.
    fn failed(&self, message: String) -> VolumeObserved {
        VolumeObserved { state: VolumeState::Error, message, ..self.unchanged() }
    }

    /// Writes the observation (with an `error` event when the volume newly fails).
    async fn record(&self, mut observed: VolumeObserved, outcome: Outcome) -> Result<Outcome, PassError> {
        let now = now_micros();
        observed.events.extend(self.volume.failure_event(observed.state, &observed.message, now));
        let state = observed.state;
        self.pass.store.volume_observe(&self.volume.id, &observed, now).await.context("recording the volume failed")?;
        Ok(outcome.in_state(state))
    }

    /// The volume at the provider: by its recorded id, else by name (a crashed pass's create).
    async fn find(&self) -> Result<Option<Volume>, ProviderError> {
        if !self.volume.provider_id.is_empty() {
            return self.adapter.volume_get(&self.volume.provider_id).await.found();
        }
        self.adapter.volume_find(&self.name(), &self.volume.region).await
    }

    /// Whether an action on the provider's volume is still running.
    async fn busy(&self, volume_id: &str) -> Result<bool, ProviderError> {
        Ok(self.adapter.volume_actions(volume_id).await?.iter().any(|a| a.status == "in-progress"))
    }

    /// The volume at the provider and whether an action on it is still running. The actions
    /// are read before the volume: an action that completes between the two reads is then
    /// seen in the volume, where reading the volume first could show it still attached (or
    /// not yet) while its actions say nothing is running, and the next step would be refused.
    async fn observe(&self) -> Result<Option<(Volume, bool)>, ProviderError> {
        let known = if self.volume.provider_id.is_empty() {
            match self.find().await? {
                Some(found) => found.id,
                None => return Ok(None),
            }
        } else {
            self.volume.provider_id.clone()
        };
        let busy = self.busy(&known).await.found()?;
        let found = self.adapter.volume_get(&known).await.found()?;
        Ok(match (found, busy) {
            (Some(found), Some(busy)) => Some((found, busy)),
            _ => None,
        })
    }

    /// The step the attachment needs: detach from a machine that is not the asked one first.
    async fn attachment(&self, found: &Volume) -> Result<Attachment, PassError> {
        let wanted = match &self.volume.instance_id {
            None => None,
            Some(instance_id) => {
                let instance = self.pass.store.instance_fetch(instance_id).await?;
                match instance.and_then(|i| i.machine_id).and_then(|m| m.parse::<u64>().ok()) {
                    Some(machine) => Some(machine),
                    None => return Ok(Attachment::Waiting),
                }
            }
        };
        Ok(match (found.droplet_ids.first().copied(), wanted) {
            (Some(attached), wanted) if wanted != Some(attached) => {
                Attachment::Next(VolumeChange::Detach { machine_id: attached })
            }
            (None, Some(machine)) => Attachment::Next(VolumeChange::Attach { machine_id: machine }),
            _ => Attachment::Done,
        })
    }

    async fn converge(&self) -> Result<Outcome, PassError> {
        let Some((found, busy)) = self.observe().await? else {
            if !self.volume.provider_id.is_empty() {
                let gone = "the volume is gone at the provider; delete it and make another";
                return self.record(self.failed(gone.into()), Outcome::permanent("the volume is gone")).await;
            }
            return self.create().await;
        };
        if found.id != self.volume.provider_id {
            self.pass.store.volume_set_provider_id(&self.volume.id, &found.id, now_micros()).await?;
        }
        let attached = found.droplet_ids.first().map(u64::to_string);
        let observed = VolumeObserved { attached_machine_id: attached, message: String::new(), ..self.unchanged() };
        let working =
            if self.volume.state == VolumeState::Pending { VolumeState::Pending } else { VolumeState::Updating };
        if busy {
            return self.record(VolumeObserved { state: working, ..observed }, Outcome::converging()).await;
        }
        let next = if found.size_gigabytes < self.volume.size_gigabytes {
            Attachment::Next(VolumeChange::Resize { size_gigabytes: self.volume.size_gigabytes })
        } else {
            self.attachment(&found).await?
        };
        match next {
            Attachment::Next(change) => self.act(&found, change, VolumeObserved { state: working, ..observed }).await,
            Attachment::Waiting => {
                self.record(VolumeObserved { state: working, ..observed }, Outcome::converging()).await
            }
            Attachment::Done => self.ready(observed, &found).await,
        }
    }

    /// Records the volume `ready` (with a `ready` event when it newly is).
    async fn ready(&self, mut observed: VolumeObserved, found: &Volume) -> Result<Outcome, PassError> {
        observed.state = VolumeState::Ready;
        if self.volume.state != VolumeState::Ready {
            let mut ready = self.volume.clone();
            ready.state = VolumeState::Ready;
            observed.events.push(volume_event(
                LifecycleEvent::Ready,
                &ready,
                now_micros(),
                serde_json::json!({"attachedMachineId": observed.attached_machine_id, "providerSize": found.size_gigabytes}),
            ));
        }
        self.record(observed, Outcome::settled()).await
    }

    /// Starts `change` on the provider's volume.
    async fn act(&self, found: &Volume, change: VolumeChange, observed: VolumeObserved) -> Result<Outcome, PassError> {
        match self.adapter.volume_action(&found.id, &self.volume.region, change).await {
            Ok(_) => self.record(observed, Outcome::converging()).await,
            Err(error) => {
                let error = refusal(error)?;
                let message = format!("the provider refused to change the volume: {}", error.message);
                self.record(self.failed(message), Outcome::permanent(error.to_string())).await
            }
        }
    }

    async fn create(&self) -> Result<Outcome, PassError> {
        let v = self.volume;
        let spec = VolumeSpec {
            name: self.name(),
            region: v.region.clone(),
            size_gigabytes: v.size_gigabytes,
            description: v.description.clone(),
            filesystem_type: v.filesystem_type.clone(),
            tags: vec![VOLUME_TAG.to_owned()],
        };
        match self.adapter.volume_create(&spec).await {
            Ok(created) => {
                self.pass.store.volume_set_provider_id(&v.id, &created.id, now_micros()).await?;
                Ok(Outcome::converging().in_state(v.state))
            }
            Err(error) => {
                let error = refusal(error)?;
                let message = format!("the provider refused the volume: {}", error.message);
                self.record(self.failed(message), Outcome::permanent(error.to_string())).await
            }
        }
    }

    async fn delete(&self) -> Result<Outcome, PassError> {
        let Some((found, busy)) = self.observe().await? else {
            self.shared.objects().confirm_gone(self.volume).await?;
            self.pass.store.volume_finish_delete(&self.volume.id, now_micros()).await?;
            return Ok(Outcome::remove());
        };
        if busy {
            return Ok(Outcome::converging().in_state(VolumeState::Deleting));
        }
        let result = match found.droplet_ids.first() {
            Some(&machine_id) => self
                .adapter
                .volume_action(&found.id, &self.volume.region, VolumeChange::Detach { machine_id })
                .await
                .map(drop),
            None => self.adapter.volume_delete(&found.id).await.found().map(drop),
        };
        match result {
            Ok(()) if found.droplet_ids.is_empty() => {
                self.shared.objects().confirm_gone(self.volume).await?;
                self.pass.store.volume_finish_delete(&self.volume.id, now_micros()).await?;
                Ok(Outcome::remove())
            }
            Ok(()) => Ok(Outcome::converging().in_state(VolumeState::Deleting)),
            Err(error) => {
                let error = refusal(error)?;
                let message = format!("the provider refused to delete the volume: {}", error.message);
                let retry = Outcome::retry(error.to_string(), self.shared.timings.delete_backoff);
                self.record(self.failed(message), retry).await
            }
        }
    }
}
