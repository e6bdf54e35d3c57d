//! The orphan sweeper: a reconciler of one object (`orphan-sweep/orphans`), queued when a forced
//! delete records orphans, that retries removing each `pending` or `stillThere` orphan through
//! its account's adapter ([`ProviderObjects`]) while the account recovers. Each becomes
//! `removed` once the provider confirms it gone (a not-found counts), else `stillThere` with the
//! last error; the sweep comes back on the kind's backoff while any is left, and its work item
//! goes once none is.

use super::provider_objects::{ObjectRef, ProviderObjects};
use super::{Backoff, Outcome, Pass, PassError, Reconciler, Schedule};
use crate::provider::ProviderError;
use crate::store::{ORPHAN_SWEEP_KIND, OrphanRow, now_micros};

/// The most orphans one sweep tries.
const SWEEP_BATCH: i64 = 50;

/// Retries the removal of orphans.
#[derive(Clone, Debug)]
pub struct OrphanSweeper {
    /// The accounts' adapters.
    pub objects: ProviderObjects,
    /// The delays between sweeps while orphans remain.
    pub backoff: Backoff,
}

impl OrphanSweeper {
    /// Removes `orphan` at the provider: `Ok` once it is gone, else why it is still there.
    async fn remove(&self, orphan: &OrphanRow) -> Result<(), String> {
        let object = ObjectRef {
            provider: &orphan.provider,
            kind: &orphan.kind,
            name: &orphan.name,
            location: &orphan.location,
            account_id: &orphan.account_id,
        };
        let gone = async {
            if self.objects.lookup(&object).await?.is_none() {
                return Ok::<bool, ProviderError>(true);
            }
            self.objects.delete(&object).await?;
            Ok(self.objects.lookup(&object).await?.is_none())
        };
        match gone.await {
            Ok(true) => Ok(()),
            Ok(false) => Err(format!(
                "{} is still there after its delete (the provider may still be deleting it)",
                object.describe()
            )),
            Err(error) => Err(format!("{}: {error}", object.describe())),
        }
    }
}

#[tonic::async_trait]
impl Reconciler for OrphanSweeper {
    fn kind(&self) -> &'static str {
        ORPHAN_SWEEP_KIND
    }

    fn schedule(&self) -> Schedule {
        Schedule::with_backoff(self.backoff)
    }

    async fn reconcile(&self, pass: &Pass) -> Outcome {
        let due = match pass.store.orphan_due(SWEEP_BATCH).await {
            Ok(due) => due,
            Err(error) => return PassError::from(error).outcome(),
        };
        if due.is_empty() {
            return Outcome::remove();
        }
        let mut left = Vec::new();
        for orphan in &due {
            let tried = self.remove(orphan).await;
            if let Err(error) =
                pass.store.orphan_tried(&orphan.id, tried.as_ref().err().map(String::as_str), now_micros()).await
            {
                return PassError::from(error).outcome();
            }
            match tried {
                Ok(()) => {
                    tracing::info!(orphan = %orphan.id, kind = %orphan.kind, name = %orphan.name, "orphan removed")
                }
                Err(error) => left.push(error),
            }
        }
        match left.first() {
            // Removed all it tried: the next sweep finds what else is due, or ends.
            None => Outcome::converging(),
            Some(first) => Outcome::transient(format!("{} orphan(s) still there; first: {first}", left.len())),
        }
    }
}
