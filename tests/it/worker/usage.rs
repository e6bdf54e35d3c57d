//! Metering: one unit per hour a resource existed in, billed once however often the pass runs,
//! and `Usage.list` by period and meter, scoped to the caller's tenant.

use better_compute::store::{HOUR_MICROS, Store, hour_floor, now_micros};
use serde_json::json;

use crate::harness::{System, tenant_principal};
use crate::on_both_backends;

fn rfc3339(micros: i64) -> String {
    let seconds = micros / 1_000_000;
    let (days, rest) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    // Civil from days (Howard Hinnant's algorithm), so the test needs no date crate.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rest / 3600, rest % 3600 / 60, rest % 60)
}

async fn ledger_rows(store: &Store) -> Vec<(String, String, i64)> {
    let now = now_micros();
    let mut rows: Vec<_> = store
        .usage_list(None, "", 0, now + HOUR_MICROS)
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.meter, r.resource_id, r.hour))
        .collect();
    rows.sort();
    rows
}

async fn metering_twice_bills_once(backend: better_compute::store::Backend) {
    let server = System::on(backend).server().await;
    let db = server.db.clone();
    let store = server.store.clone();
    for tenant in ["acme", "globex"] {
        server.admin_ok("/api/platform/tenants/create", json!({"id": tenant})).await;
    }
    let now = now_micros();
    let this_hour = hour_floor(now);
    // Running since 10 minutes into the hour five hours ago: hours -5 .. -1 are over (5 units);
    // the current hour is not billed yet.
    store
        .usage_billable_record("test.cluster.hours", "kcl_a", "acme", this_hour - 5 * HOUR_MICROS + 600_000_000, None)
        .await
        .unwrap();
    // Lived 20 minutes inside one hour, three hours ago: 1 unit.
    let start = this_hour - 3 * HOUR_MICROS + 60_000_000;
    store.usage_billable_record("test.lb.hours", "plb_b", "globex", start, Some(start + 1_200_000_000)).await.unwrap();
    // Across an hour boundary: from 30 minutes before hour -2 to 30 minutes after it: 2 units.
    let start = this_hour - 2 * HOUR_MICROS - 1_800_000_000;
    store.usage_billable_record("test.lb.hours", "plb_c", "acme", start, Some(start + HOUR_MICROS)).await.unwrap();

    let first = store.usage_meter(now).await.unwrap();
    assert_eq!(first, 8);
    let rows = ledger_rows(&store).await;
    assert_eq!(rows.len(), 8, "{rows:?}");
    assert_eq!(store.usage_meter(now).await.unwrap(), 0, "a second pass over the same hours bills nothing");
    // Two passes at once, as two workers would run them, after the billed-until marks are reset.
    reset_billing_marks(&db.url).await;
    let (a, b) = tokio::join!(store.usage_meter(now), store.usage_meter(now));
    assert_eq!(a.unwrap() + b.unwrap(), 0, "the ledger's key refuses a second bill");
    assert_eq!(ledger_rows(&store).await, rows);

    // Usage.list: by period and meter, a tenant sees its own only.
    let acme = tenant_principal(&store, "acme", "viewer").await;
    let period = json!({
        "tenantId": "acme",
        "start": rfc3339(this_hour - 6 * HOUR_MICROS),
        "end": rfc3339(this_hour + HOUR_MICROS)
    });
    let mut body = period.clone();
    body["meter"] = json!("test.cluster.hours");
    let (status, json) = server.post("/api/compute/usage/list", Some(&acme), body).await;
    assert_eq!(status, 200, "{json}");
    let usage = json["usage"].as_array().unwrap();
    assert_eq!(usage.len(), 5, "{json}");
    assert!(usage.iter().all(|u| u["resourceId"] == "kcl_a" && u["quantity"] == 1 && u["tenantId"] == "acme"));
    let (status, json) = server.post("/api/compute/usage/list", Some(&acme), period.clone()).await;
    assert_eq!(status, 200);
    assert_eq!(json["usage"].as_array().unwrap().len(), 7, "acme's two resources: {json}");
    let mut other = period.clone();
    other["tenantId"] = json!("globex");
    let (status, json) = server.post("/api/compute/usage/list", Some(&acme), other.clone()).await;
    assert_eq!(status, 403, "{json}");
    let mut all_tenants = period.clone();
    all_tenants["tenantId"] = json!("");
    let everything = server.admin_ok("/api/compute/usage/list", all_tenants).await;
    assert_eq!(everything["usage"].as_array().unwrap().len(), 8);
    let globex = server.admin_ok("/api/compute/usage/list", other).await;
    assert_eq!(globex["usage"].as_array().unwrap().len(), 1);
    server.stop().await;
}

/// Forgets how far each billable was billed, as if no pass had run.
async fn reset_billing_marks(url: &str) {
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(url).await.unwrap();
    sqlx::query("UPDATE usage_billables SET billed_until = billing_start - (billing_start % 3600000000)")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
}

on_both_backends!(metering_twice_bills_once);
