//! The BMC password, as a real `bc-server` keeps it: sealed in its column and nowhere else (not
//! in an answer, the log, an event, the audit trail or any other column), replaced by an update
//! and wiped by retire.

use better_compute::secrets::SecretKey;
use better_compute::store::Backend;
use better_compute::store::{AuditFilter, EventFilter};
use serde_json::json;
use sqlx::{Connection, Row};

use super::{ENROLL, PASSWORD, enrolment};
use crate::harness::{DO_TOKEN, System};

/// Every row of every table of the database, as text.
async fn database_text(url: &str) -> String {
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    let mut text = String::new();
    for table in tables {
        let sql = format!("SELECT CAST(t AS TEXT) FROM \"{table}\" t");
        for row in sqlx::query(sqlx::AssertSqlSafe(sql)).fetch_all(&mut conn).await.unwrap() {
            text.push_str(&row.get::<String, _>(0));
            text.push('\n');
        }
    }
    text
}

async fn sealed_password(url: &str, node: &str) -> String {
    sealed_column(url, node, "password_sealed").await
}

/// What machine `node` keeps in its sealed `column`.
async fn sealed_column(url: &str, node: &str, column: &str) -> String {
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    let sql = format!("SELECT {column} FROM metal_machines WHERE node_id = $1");
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).bind(node).fetch_one(&mut conn).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bmc_password_is_found_nowhere_but_sealed_in_its_column() {
    let server = System::on(Backend::Postgres).process(&[]).await;
    let admin = server.admin_token.clone();
    server.ok("/api/platform/tenants/create", &admin, json!({"id": "acme"})).await;
    let account = server
        .ok(
            "/api/platform/accounts/create",
            &admin,
            json!({"tenantId": "acme", "provider": "digitalocean", "name": "d", "credentials": DO_TOKEN,
                "regions": ["nyc3"]}),
        )
        .await;
    let pool = server
        .ok(
            "/api/platform/pools/create",
            &admin,
            json!({"accountId": account["id"], "name": "p", "billingMode": "none"}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut answers = Vec::new();
    let enrolled = server.ok(ENROLL, &admin, enrolment(&pool, "m1", "k")).await;
    let node = enrolled["id"].as_str().unwrap().to_owned();
    answers.push(enrolled.clone());
    // A refused enrolment does not echo it either.
    let mut refused = enrolment(&pool, "m2", "k2");
    refused["bmc"]["address"] = json!("not a url");
    answers.push(server.post(ENROLL, &admin, refused).await.1);

    let key = SecretKey::from_base64(&server.secret_key).unwrap();
    let sealed = sealed_password(&server.database_url, &node).await;
    assert_eq!(key.open(&sealed, &node).unwrap().expose(), PASSWORD, "sealed to the node with the server's key");

    // Rotation: the new password is sealed beside the old one until the BMC takes it.
    sqlx_execute(
        &server.database_url,
        &format!("UPDATE metal_machines SET provision_state = 'manageable' WHERE node_id = '{node}'"),
    )
    .await;
    let rotated = "rotated-Pa55-0b1d";
    let update = json!({"poolId": pool, "nodeId": node, "password": rotated, "username": "root"});
    answers.push(server.ok("/api/compute/metal/update", &admin, update).await);
    let pending = sealed_column(&server.database_url, &node, "password_pending_sealed").await;
    assert_eq!(key.open(&pending, &node).unwrap().expose(), rotated);
    let sealed = sealed_password(&server.database_url, &node).await;
    assert_eq!(key.open(&sealed, &node).unwrap().expose(), PASSWORD, "the old one stays in use meanwhile");
    answers.push(server.ok("/api/compute/metal/get", &admin, json!({"poolId": pool, "nodeId": node})).await);
    answers.push(server.ok("/api/compute/metal/list", &admin, json!({"poolId": pool})).await);

    let log = server.log_text();
    assert!(log.contains(&node), "the log names the machine: {log}");
    let filter = EventFilter { subject: pool.clone(), limit: 100, ..Default::default() };
    let events = server.store.event_list_after(&filter).await.unwrap();
    let metal_events = events.iter().filter(|event| event.event_type.starts_with("metal.")).count();
    assert_eq!(metal_events, 2, "enrolled and updated: {events:?}");
    let audit = server.store.audit_list(&AuditFilter { limit: 1000, ..Default::default() }).await.unwrap();
    assert!(audit.iter().any(|row| row.method.ends_with("Metal/Enroll")), "{audit:?}");
    let mut database = database_text(&server.database_url).await;
    for password in [PASSWORD, rotated] {
        assert!(!log.contains(password), "the password is in the log");
        for answer in &answers {
            assert!(!answer.to_string().contains(password), "in an answer: {answer}");
        }
        for event in &events {
            assert!(!event.data.to_string().contains(password), "in an event: {:?}", event.data);
        }
        assert!(!format!("{audit:?}").contains(password), "in the audit trail");
        assert!(!database.contains(password), "in the database");
    }

    // Retire wipes the credentials (at once for a machine whose BMC never answered).
    sqlx_execute(
        &server.database_url,
        &format!("UPDATE metal_machines SET provision_state = 'enrollFailed' WHERE node_id = '{node}'"),
    )
    .await;
    let retired = server.ok("/api/compute/metal/retire", &admin, json!({"poolId": pool, "nodeId": node})).await;
    assert_eq!(
        (retired["provisionState"].as_str(), retired["credentialsSet"].as_bool()),
        (Some("retired"), Some(false))
    );
    assert_eq!(sealed_password(&server.database_url, &node).await, "");
    assert_eq!(sealed_column(&server.database_url, &node, "password_pending_sealed").await, "", "and the pending one");
    database = database_text(&server.database_url).await;
    assert!(!database.contains(&sealed) && !database.contains(&pending), "the sealed passwords are gone");
    server.assert_up();
}

async fn sqlx_execute(url: &str, sql: &str) {
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(sql.to_owned())).execute(&mut conn).await.unwrap();
}
