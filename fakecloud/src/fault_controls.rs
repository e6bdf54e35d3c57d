//! The test controls that fail calls with a [`FaultClass`] until cleared (by call or by
//! account), and the listener whose certificate no one trusts.

use crate::{FakeCloud, FaultClass, FaultScope};

impl FakeCloud {
    /// Fails every call of `kind` with `verb` on `name` as `class` says, until
    /// [`FakeCloud::clear_fault`]; each may be `*`. Returns the rule's id.
    ///
    /// Kinds: GKE `cluster`, `nodePool`, `operation`, `serverConfig`; Compute Engine `network`,
    /// `subnetwork`, `operation`; DigitalOcean `droplet`, `loadBalancer`, `vpc`, `certificate`,
    /// `volume`; Redfish `system` (the system and everything below it: processors, NICs,
    /// drives, its actions), `manager` (its virtual media), `session`, `serviceRoot`; Google's
    /// token endpoint `token` (named by the service account's email). Verbs: `create`, `get`,
    /// `list`, `update` (a node pool's custom verbs such as `:setSize` too), `delete`; a
    /// DigitalOcean volume action's `type` and `actions` for their list; Redfish `reset`,
    /// `erase`, `insertMedia`, `ejectMedia`. `name` is the object's name or id (a create's, from
    /// its body), or its parent's: a node pool's cluster, a Redfish sub-resource's `system-N`.
    pub fn fail_calls(&self, kind: &str, verb: &str, name: &str, class: FaultClass) -> u64 {
        let scope = FaultScope::Calls { kind: kind.into(), verb: verb.into(), name: name.into() };
        self.shared.world().faults.add_rule(scope, class)
    }

    /// Fails every call made on `account` as `class` says, until [`FakeCloud::clear_fault`];
    /// returns the rule's id. An account is a Google project id or service-account email
    /// (whose token requests fail too when `class` is `Unauthenticated`, `Unreachable` or
    /// `Retryable`), a DigitalOcean API token, or a Redfish system id (`system-N`).
    pub fn fail_account(&self, account: &str, class: FaultClass) -> u64 {
        self.shared.world().faults.add_rule(FaultScope::Account(account.into()), class)
    }

    /// The provider revokes `account`'s credentials: every call on it is refused 401 (and a
    /// service account's token requests `invalid_grant`) until [`FakeCloud::clear_fault`] of
    /// the id returned.
    pub fn revoke_credentials(&self, account: &str) -> u64 {
        self.fail_account(account, FaultClass::Unauthenticated)
    }

    /// Ends the rule `id`; false if there is none.
    pub fn clear_fault(&self, id: u64) -> bool {
        let mut world = self.shared.world();
        let before = world.faults.rules.len();
        world.faults.rules.retain(|rule| rule.id != id);
        world.faults.rules.len() < before
    }

    /// Ends every rule and drops every scripted failure not yet used.
    pub fn clear_faults(&self) {
        let mut world = self.shared.world();
        world.faults.rules.clear();
        world.faults.scripted.clear();
    }

    /// How many calls the rule `id` failed so far, so that a test can wait until a call was
    /// failed; `None` if there is no such rule.
    pub fn fault_hits(&self, id: u64) -> Option<u64> {
        self.shared.world().faults.rules.iter().find(|rule| rule.id == id).map(|rule| rule.hits)
    }

    /// `https://127.0.0.1:PORT`: the same API as [`FakeCloud::https_url`], behind a certificate
    /// of a CA no client is given ([`FakeCloud::untrusted_ca_pem`] is given to no one but a
    /// test that wants to), so a client trusting [`FakeCloud::ca_pem`] or the system's roots
    /// refuses it as of an unknown issuer.
    pub fn untrusted_https_url(&self) -> &str {
        &self.untrusted_url
    }

    /// The PEM of the CA behind [`FakeCloud::untrusted_https_url`].
    pub fn untrusted_ca_pem(&self) -> &str {
        &self.untrusted_ca_pem
    }

    /// The BMC address of system `id` (`system-N`) behind a certificate no one trusts:
    /// `https://127.0.0.1:PORT/redfish/v1/Systems/<id>`. `None` if there is no such system.
    pub fn bmc_untrusted_url(&self, id: &str) -> Option<String> {
        let exists = self.shared.world().redfish.machine_mut(id).is_some();
        exists.then(|| format!("{}/redfish/v1/Systems/{id}", self.untrusted_url))
    }
}
