//! The reconcilers' status: what the workers record per kind (objects, queue, leases, failures,
//! pass times) and the objects stuck past their deadline. Read by `Reconcilers.Status` (the
//! layer has decided the caller may) and by `/metrics` at scrape time.

use super::Service;
use crate::error::Result;
use crate::store::{KindStatus, StuckItem, now_micros};

/// The stuck objects a status lists at most.
const STUCK_LIMIT: i64 = 500;

impl Service {
    /// Per-kind figures and stuck objects.
    pub async fn reconcilers_status(&self) -> Result<(Vec<KindStatus>, Vec<StuckItem>)> {
        let now = now_micros();
        Ok((self.store.work_status(now).await?, self.store.work_list_stuck(now, STUCK_LIMIT).await?))
    }
}
