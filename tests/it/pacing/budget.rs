//! The budget and the breaker as the store keeps them, for every worker process at once: two
//! store handles (two processes) spend one budget; an open breaker refuses every call but one
//! probe per interval, a working probe closes it, and a refusal of credentials that changed
//! meanwhile is stale (the call is made again with the new ones).

use better_compute::domain::rate_limits::PROBE_EVERY_MICROS;
use better_compute::store::{Backend, CallReport, ReportAnswer, Store, Verdict};

use super::{ACCOUNT, setup};

/// An account view's version.
fn version_of(account: &serde_json::Value) -> i64 {
    account["version"].as_i64().unwrap_or_else(|| panic!("{account}"))
}

crate::on_both_backends!(two_processes_spend_one_budget, an_open_breaker_lets_one_probe_out_per_interval);

async fn two_processes_spend_one_budget(backend: Backend) {
    let env = setup(backend).start().await;
    let version = version_of(&env.pace_account(&[(100, 3_600)]).await);
    let other_process = Store::connect(&env.server.db.url, 2).await.unwrap();
    let now = 1_000_000_000_000;
    let mut granted = 0;
    for turn in 0..30 {
        let store = if turn % 2 == 0 { &env.store } else { &other_process };
        match store.pacing_take(ACCOUNT, version, 1, now).await.unwrap().verdict {
            Verdict::Go { granted: n, probe: false, .. } => granted += n,
            Verdict::Wait(wait) => assert!(wait > 0),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(granted, 10, "a burst of a tenth of 100, shared by both");
    // Several calls at once take several from the budget, no more than it holds.
    let later = now + 3_600 * 1_000_000;
    let take = other_process.pacing_take(ACCOUNT, version, 25, later).await.unwrap();
    assert_eq!(take.verdict, Verdict::Go { granted: 10, probe: false, cautious: false });
}

async fn an_open_breaker_lets_one_probe_out_per_interval(backend: Backend) {
    let env = setup(backend).start().await;
    let store = &env.store;
    let version = version_of(&env.account().await);
    let now = 2_000_000_000_000;
    let refused = CallReport::CredentialsRefused { version, message: "Unable to authenticate you".into() };
    assert_eq!(store.pacing_report(ACCOUNT, &refused, now).await.unwrap(), ReportAnswer::Recorded);
    let Verdict::Refused(breaker) = store.pacing_take(ACCOUNT, version, 1, now + 1).await.unwrap().verdict else {
        panic!("the breaker refuses");
    };
    assert_eq!((breaker.since, breaker.probe_at), (now, now + PROBE_EVERY_MICROS));
    assert_eq!(breaker.message, "Unable to authenticate you");

    let due = now + PROBE_EVERY_MICROS;
    assert_eq!(
        store.pacing_take(ACCOUNT, version, 5, due).await.unwrap().verdict,
        Verdict::Go { granted: 1, probe: true, cautious: false }
    );
    assert!(
        matches!(store.pacing_take(ACCOUNT, version, 1, due).await.unwrap().verdict, Verdict::Refused(_)),
        "one probe per interval"
    );
    assert_eq!(store.pacing_report(ACCOUNT, &CallReport::CredentialsWork, due).await.unwrap(), ReportAnswer::Reopened);
    assert!(matches!(
        store.pacing_take(ACCOUNT, version, 1, due).await.unwrap().verdict,
        Verdict::Go { probe: false, .. }
    ));

    // The credentials change; a refusal of a call made with the old ones opens nothing.
    let changed = version_of(&env.pace_account(&[(250, 60)]).await);
    let take = store.pacing_take(ACCOUNT, version, 1, due).await.unwrap();
    assert_eq!(take.version, changed);
    assert!(take.sealed_credentials.is_some(), "the new version's credentials come with the take");
    assert_eq!(store.pacing_report(ACCOUNT, &refused, due).await.unwrap(), ReportAnswer::Stale);
    assert!(matches!(store.pacing_take(ACCOUNT, changed, 1, due).await.unwrap().verdict, Verdict::Go { .. }));
}

#[tokio::test]
async fn a_wait_the_provider_asked_for_holds_every_process() {
    let env = setup(Backend::Sqlite).start().await;
    let version = version_of(&env.account().await);
    let now = 3_000_000_000_000;
    let until = now + 5_000_000;
    let paced = env.store.pacing_report(ACCOUNT, &CallReport::PaceUntil(until), now).await.unwrap();
    assert_eq!(paced, ReportAnswer::Recorded);
    assert_eq!(
        env.store.pacing_take(ACCOUNT, version, 1, now + 1_000_000).await.unwrap().verdict,
        Verdict::Wait(4_000_000)
    );
    // A shorter wait asked later does not shorten it.
    env.store.pacing_report(ACCOUNT, &CallReport::PaceUntil(now + 1), now).await.unwrap();
    assert!(matches!(env.store.pacing_take(ACCOUNT, version, 1, now + 2).await.unwrap().verdict, Verdict::Wait(_)));
    // Then one call at a time, until an answer says there is room again.
    let after = env.store.pacing_take(ACCOUNT, version, 8, until).await.unwrap().verdict;
    assert_eq!(after, Verdict::Go { granted: 1, probe: false, cautious: true });
    assert!(matches!(env.store.pacing_take(ACCOUNT, version, 8, until).await.unwrap().verdict, Verdict::Wait(_)));
    env.store.pacing_report(ACCOUNT, &CallReport::HoldOver, until).await.unwrap();
    let free = env.store.pacing_take(ACCOUNT, version, 8, until).await.unwrap().verdict;
    assert_eq!(free, Verdict::Go { granted: 8, probe: false, cautious: false });
}
