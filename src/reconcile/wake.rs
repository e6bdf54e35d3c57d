//! Wake-ups from other processes: on Postgres a dedicated `LISTEN` connection (the store's pool
//! is sqlx `Any`, which cannot listen) turns every `NOTIFY` of new work or events into the
//! store's in-process signal. A lost connection is re-opened by the listener; the tick covers
//! what is sent meanwhile.

use std::time::Duration;

use sqlx::postgres::PgListener;

use crate::store::{Backend, NOTIFY_CHANNEL, Store};

/// Listens until the returned task is aborted; does nothing on SQLite (one process) nor on
/// CockroachDB (no `LISTEN`).
pub fn spawn_listener(store: &Store) -> Option<tokio::task::JoinHandle<()>> {
    if store.backend() != Backend::Postgres || !store.signals().notifies() {
        return None;
    }
    let store = store.clone();
    Some(tokio::spawn(async move {
        loop {
            match listen(&store).await {
                Ok(()) => return,
                Err(error) => {
                    tracing::warn!(%error, "the Postgres listener failed; retrying");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    }))
}

async fn listen(store: &Store) -> Result<(), sqlx::Error> {
    let mut listener = PgListener::connect(store.signals().database_url()).await?;
    listener.listen(NOTIFY_CHANNEL).await?;
    // Work may have been written while we were not listening.
    store.signals().wake_all();
    loop {
        listener.recv().await?;
        store.signals().wake_all();
    }
}
