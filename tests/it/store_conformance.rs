//! The store conformance suite: the same tests on Postgres and on SQLite, so the two backends
//! keep one behaviour.

use better_compute::error::Code;
use better_compute::store::{Backend, NewApiKey, NewTenant, PrincipalRow, TenantChange, now_micros};

use crate::harness::System;

crate::on_both_backends!(
    migrations_apply_once_and_leave_nothing_pending,
    a_tenant_round_trips_with_its_fields,
    a_taken_tenant_id_is_a_conflict_and_writes_nothing,
    concurrent_creates_of_one_id_let_exactly_one_through,
    updates_bump_the_version_and_keep_unnamed_fields,
    delete_is_idempotent_and_a_deleted_tenant_cannot_change,
    lists_are_oldest_first_and_hide_deleted_unless_asked,
    api_keys_are_found_with_their_principal,
);

fn new_tenant(id: &str, now: i64) -> NewTenant {
    NewTenant { id: id.to_owned(), display_name: format!("{id} Inc."), description: "d".to_owned(), now }
}

async fn migrations_apply_once_and_leave_nothing_pending(backend: Backend) {
    let db = System::on(backend).database().await;
    let store = better_compute::store::Store::connect(&db.url, 4).await.unwrap();
    let pending = store.pending_migrations().await.unwrap();
    assert_eq!(pending.first(), Some(&1), "a new database lacks every migration: {pending:?}");
    assert!(pending.windows(2).all(|pair| pair[0] < pair[1]), "{pending:?}");
    store.migrate().await.unwrap();
    assert!(store.pending_migrations().await.unwrap().is_empty());
    store.migrate().await.unwrap();
    assert_eq!(store.backend(), backend);
    assert_eq!(db.backend, backend);
}

async fn a_tenant_round_trips_with_its_fields(backend: Backend) {
    let db = System::on(backend).database().await;
    let store = db.store().await;
    let now = now_micros();
    let created = store.tenant_create(&new_tenant("acme", now)).await.unwrap();
    assert_eq!(created.id, "acme");
    assert_eq!(created.display_name, "acme Inc.");
    assert_eq!(created.state, "active");
    assert_eq!(created.version, 1);
    assert_eq!(created.created_at, now);
    assert_eq!(created.deleted_at, None);
    assert_eq!(store.tenant_fetch("acme").await.unwrap(), created);
    let missing = store.tenant_fetch("nope").await.unwrap_err();
    assert_eq!(missing.code, Code::NotFound);
}

async fn a_taken_tenant_id_is_a_conflict_and_writes_nothing(backend: Backend) {
    let db = System::on(backend).database().await;
    let store = db.store().await;
    let first = store.tenant_create(&new_tenant("acme", 1)).await.unwrap();
    let mut again = new_tenant("acme", 2);
    again.display_name = "Other".to_owned();
    let error = store.tenant_create(&again).await.unwrap_err();
    assert_eq!(error.code, Code::Conflict);
    assert_eq!(store.tenant_fetch("acme").await.unwrap(), first);
    assert_eq!(store.tenant_list(true).await.unwrap().len(), 1);
}

async fn concurrent_creates_of_one_id_let_exactly_one_through(backend: Backend) {
    let db = System::on(backend).database().await;
    let store = db.store().await;
    let attempts: Vec<_> = (0..16)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move { store.tenant_create(&new_tenant("race", i)).await })
        })
        .collect();
    let mut created = 0;
    for attempt in attempts {
        match attempt.await.unwrap() {
            Ok(_) => created += 1,
            Err(error) => assert_eq!(error.code, Code::Conflict, "{error}"),
        }
    }
    assert_eq!(created, 1);
}

async fn updates_bump_the_version_and_keep_unnamed_fields(backend: Backend) {
    let db = System::on(backend).database().await;
    let store = db.store().await;
    store.tenant_create(&new_tenant("acme", 1)).await.unwrap();
    let change = TenantChange { display_name: Some("Acme".to_owned()), description: None };
    let updated = store.tenant_update("acme", &change, 5).await.unwrap();
    assert_eq!((updated.display_name.as_str(), updated.description.as_str()), ("Acme", "d"));
    assert_eq!(updated.version, 2);
    assert_eq!(updated.updated_at, 5);
    assert_eq!(updated.created_at, 1);
    let change = TenantChange { display_name: None, description: Some(String::new()) };
    let updated = store.tenant_update("acme", &change, 6).await.unwrap();
    assert_eq!((updated.display_name.as_str(), updated.description.as_str(), updated.version), ("Acme", "", 3));
    assert_eq!(store.tenant_update("nope", &change, 7).await.unwrap_err().code, Code::NotFound);
}

async fn delete_is_idempotent_and_a_deleted_tenant_cannot_change(backend: Backend) {
    let db = System::on(backend).database().await;
    let store = db.store().await;
    store.tenant_create(&new_tenant("acme", 1)).await.unwrap();
    let deleted = store.tenant_delete("acme", 10).await.unwrap();
    assert_eq!((deleted.state.as_str(), deleted.deleted_at, deleted.version), ("deleted", Some(10), 2));
    let again = store.tenant_delete("acme", 20).await.unwrap();
    assert_eq!(again, deleted, "deleting a deleted tenant returns it unchanged");
    let change = TenantChange { display_name: Some("x".to_owned()), description: None };
    assert_eq!(store.tenant_update("acme", &change, 30).await.unwrap_err().code, Code::InvalidState);
    assert_eq!(store.tenant_delete("nope", 1).await.unwrap_err().code, Code::NotFound);
}

async fn lists_are_oldest_first_and_hide_deleted_unless_asked(backend: Backend) {
    let db = System::on(backend).database().await;
    let store = db.store().await;
    for (id, at) in [("c", 3), ("a", 1), ("b", 2)] {
        store.tenant_create(&new_tenant(id, at)).await.unwrap();
    }
    store.tenant_delete("a", 4).await.unwrap();
    let ids = |rows: Vec<better_compute::store::TenantRow>| rows.into_iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(ids(store.tenant_list(false).await.unwrap()), ["b", "c"]);
    assert_eq!(ids(store.tenant_list(true).await.unwrap()), ["a", "b", "c"]);
}

async fn api_keys_are_found_with_their_principal(backend: Backend) {
    let db = System::on(backend).database().await;
    let store = db.store().await;
    assert_eq!(store.api_key_count().await.unwrap(), 0);
    let principal = PrincipalRow {
        id: "prn_00000000000000000000000001".to_owned(),
        kind: "operator".to_owned(),
        tenant_id: None,
        name: "ops".to_owned(),
        created_at: 7,
        deleted_at: None,
    };
    let key = NewApiKey {
        id: "bck_00000000000000000000000001".to_owned(),
        secret_sha256: "ab".repeat(32),
        description: "test".to_owned(),
        expires_at: Some(99),
    };
    store.principal_create_with_key(&principal, &key, &[]).await.unwrap();
    assert_eq!(store.api_key_count().await.unwrap(), 1);
    let (found, owner) = store.api_key_fetch_with_principal(&key.id).await.unwrap().unwrap();
    assert_eq!(owner, principal);
    assert_eq!((found.secret_sha256, found.expires_at, found.revoked_at), (key.secret_sha256.clone(), Some(99), None));
    assert!(store.api_key_fetch_with_principal("bck_0000000000000000000000000z").await.unwrap().is_none());
    let error = store.principal_create_with_key(&principal, &key, &[]).await.unwrap_err();
    assert_eq!(error.code, Code::Conflict);
    assert_eq!(store.api_key_count().await.unwrap(), 1, "a refused create writes nothing");
}
