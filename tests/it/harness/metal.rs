//! Bare metal on a running system: acme's own pool for machines and a machine enrolled at a fake
//! Redfish BMC of the fake cloud, for the suites that watch what a BMC does.

use fakecloud::BmcSystemSpec;
use serde_json::{Value, json};

use super::{DO_TOKEN, Env, PASSWORD};

impl Env {
    /// acme's own pool for machines with `policy` (merged with a `metal` policy that lets the
    /// fake BMCs, on loopback, be enrolled); returns its id.
    pub async fn metal_pool(&self, policy: Value) -> String {
        let account = self
            .server
            .admin_ok(
                "/api/platform/accounts/create",
                json!({"tenantId": "acme", "provider": "digitalocean", "name": "acme-do", "credentials": DO_TOKEN,
                    "regions": ["nyc3"]}),
            )
            .await;
        let mut policy = policy;
        policy["metal"] = json!({"bmcAllowedNetworks": ["127.0.0.0/8"]});
        let body = json!({"accountId": account["id"], "name": "metal", "billingMode": "none", "policy": policy});
        self.server.admin_ok("/api/platform/pools/create", body).await["id"].as_str().unwrap().to_owned()
    }

    /// Makes machine `name` behind a fake Redfish BMC and enrols it in `pool`; returns its node
    /// id and its system's id at the BMC (`system-N`).
    pub async fn enroll_at_fake_bmc(&self, pool: &str, name: &str) -> (String, String) {
        self.enroll_behind(pool, name, |cloud, system| format!("{}/redfish/v1/Systems/{system}", cloud.https_url()))
            .await
    }

    /// As [`Env::enroll_at_fake_bmc`], but the BMC answers behind a certificate that a CA no one
    /// was given signed: every call fails its TLS handshake.
    pub async fn enroll_at_untrusted_bmc(&self, pool: &str, name: &str) -> (String, String) {
        self.enroll_behind(pool, name, |cloud, system| cloud.bmc_untrusted_url(system).unwrap()).await
    }

    async fn enroll_behind(
        &self,
        pool: &str,
        name: &str,
        address: impl Fn(&fakecloud::FakeCloud, &str) -> String,
    ) -> (String, String) {
        let spec = BmcSystemSpec { name: name.to_owned(), username: "admin".to_owned(), password: PASSWORD.to_owned() };
        let path = self.cloud.add_bmc_system(spec);
        let system = path.rsplit('/').next().unwrap().to_owned();
        let enrolment = json!({"poolId": pool, "name": name, "idempotencyKey": name,
            "bmc": {"driver": "redfish", "address": address(&self.cloud, &system), "username": "admin",
                "password": PASSWORD, "caCertificate": self.cloud.ca_pem()}});
        let node = self.ok("/api/compute/metal/enroll", enrolment).await["id"].as_str().unwrap().to_owned();
        (node, system)
    }
}
