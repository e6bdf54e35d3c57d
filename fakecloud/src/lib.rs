//! The fake cloud: stateful emulators of the provider HTTP APIs our adapters speak (GKE v1,
//! DigitalOcean v2, Google's OAuth token endpoint, and one Kubernetes API server per fake
//! cluster), so tests and `bcctl dev` run the real adapters with no network. A crate of its own:
//! only `bcctl` (for `bcctl dev` and `bcctl fakecloud`) and the tests link it, never the server or the
//! worker; it depends on nothing of the control plane but the node daemon it runs ([`bcd`]).
//!
//! Design: one [`World`] behind a mutex holds every emulated object. Time-driven changes
//! (operations finishing, balancers getting an address) are computed lazily: each request first
//! calls [`World::advance`], which applies what is due. Nothing runs in the background except
//! the listeners and the fake clusters' kubelets ([`kubelet`]), which run the bcd daemons the
//! clusters' DaemonSets ask for: those talk to a control plane, so they cannot wait for a request.
//!
//! Compute Engine (tenant networks on a GKE account) is served at `{base}/compute/v1/...`; a
//! Redfish BMC with one fake machine per system a test makes ([`FakeCloud::add_bmc_system`]) at
//! `{base}/redfish/v1`.
//!
//! Start it with [`FakeCloud::start`] (or `bcctl fakecloud --port N`); point adapters at
//! [`FakeCloud::base_url`] (plain HTTP), or at [`FakeCloud::https_url`] (the same API over HTTPS,
//! trusting [`FakeCloud::ca_pem`]): GKE at `{base}/` (paths `/v1/projects/...`), DigitalOcean at
//! `{base}` (paths `/v2/...`), the token endpoint is `{base}/token`. Test controls are methods of
//! the handle; among them, any call of any emulated API can be made to fail with a
//! [`FaultClass`], answered as that provider answers it ([`FakeCloud::fail_next`] with
//! [`Failure::Class`], [`FakeCloud::fail_calls`], [`FakeCloud::fail_account`]), and a BMC can be
//! reached behind a certificate no one trusts ([`FakeCloud::bmc_untrusted_url`]).
//!
//! The providers' published limits hold as in the real APIs, at their real numbers unless a
//! test lowers them: DigitalOcean's requests per token
//! ([`FakeCloud::set_digitalocean_rate_limits`], [`FakeCloud::digitalocean_calls`]) and GKE's
//! operations at once per cluster ([`FakeCloud::set_gke_concurrent_operations_per_cluster`]);
//! GKE's requests per project only when a test sets them ([`FakeCloud::set_gke_rate_limits`]).

// Handlers refuse by returning the finished `Response`, once per request: its size is no cost.
#![allow(clippy::result_large_err)]

mod calls;
mod clock;
mod compute;
mod digitalocean;
mod do_console;
mod do_limits;
mod do_load_balancers;
mod do_volumes;
mod fault_answers;
mod fault_controls;
mod faults;
mod gke;
mod hooks;
mod kubeapi;
mod kubelet;
mod limit_controls;
mod machine_types;
mod oauth;
mod operations;
mod rate_windows;
mod redfish;
mod tls;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode};
use serde_json::{Value, json};
use tokio::net::TcpListener;

use calls::Family;
use tokio::task::JoinHandle;

pub use do_limits::CallCounts;
pub use faults::{ErrorRate, Failure, FaultClass, FaultRule, FaultScope, RateLimitMode, ScriptedFailure};
pub use gke::VersionCatalog;
pub use rate_windows::RateWindow;
pub use redfish::{BmcSystemSpec, Boot};

/// How the fake cloud behaves.
#[derive(Clone, Debug)]
pub struct FakeCloudConfig {
    /// The port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// How long a GKE operation runs before it is `DONE`.
    pub operation_duration: Duration,
    /// How long DigitalOcean objects stay `new`/`pending` before `active`/`verified`.
    pub activation_delay: Duration,
    /// The DigitalOcean API token the fake accepts ([`FakeCloud::accept_digitalocean_token`]
    /// adds others).
    pub digitalocean_token: String,
    /// The requests each DigitalOcean token may make per window (DigitalOcean's: 250 a minute
    /// and 5,000 an hour); none: no limit.
    pub digitalocean_rate_limits: Vec<RateWindow>,
    /// How many operations GKE runs at once on one cluster (GKE's: 5).
    pub gke_concurrent_operations_per_cluster: usize,
    /// The requests each Google project may make to GKE per window; none (the default): no
    /// limit, as no test of the fake comes near GKE's quota.
    pub gke_rate_limits: Vec<RateWindow>,
    /// The versions every location offers unless a test sets its own.
    pub versions: VersionCatalog,
}

impl Default for FakeCloudConfig {
    fn default() -> Self {
        Self {
            port: 0,
            operation_duration: Duration::from_millis(300),
            activation_delay: Duration::from_millis(300),
            digitalocean_token: "fake-digitalocean-token".to_owned(),
            digitalocean_rate_limits: RateWindow::digitalocean(),
            gke_concurrent_operations_per_cluster: 5,
            gke_rate_limits: Vec::new(),
            versions: VersionCatalog::default(),
        }
    }
}

/// Every emulated object, and the faults in force.
#[derive(Default)]
pub struct World {
    gke: gke::GkeState,
    compute: compute::ComputeState,
    digitalocean: digitalocean::DoState,
    oauth: oauth::OAuthState,
    redfish: redfish::RedfishState,
    faults: faults::Faults,
    /// The DigitalOcean tokens, their budgets and what they were answered.
    digitalocean_tokens: do_limits::DoTokens,
    /// Each Google project's budget of GKE requests.
    gke_budgets: rate_windows::Budgets,
    /// What each Google project's GKE requests were answered.
    gke_counts: std::collections::BTreeMap<String, CallCounts>,
    sequence: u64,
}

impl World {
    fn new(config: &FakeCloudConfig) -> World {
        let mut world = World {
            digitalocean_tokens: do_limits::DoTokens::new(&config.digitalocean_token, &config.digitalocean_rate_limits),
            gke_budgets: rate_windows::Budgets::new(&config.gke_rate_limits),
            ..World::default()
        };
        world.gke.operation_limit = config.gke_concurrent_operations_per_cluster;
        world
    }

    /// Applies every time-driven change that is due.
    fn advance(&mut self, shared: &Shared) {
        let now = Instant::now();
        self.gke.advance(now);
        self.compute.advance(now);
        self.digitalocean.advance(now, shared.config.activation_delay);
        self.redfish.advance(now);
    }

    /// The next number of a sequence shared by every kind of id.
    fn next(&mut self) -> u64 {
        self.sequence += 1;
        self.sequence
    }
}

/// What every handler shares.
pub struct Shared {
    config: FakeCloudConfig,
    base_url: String,
    world: Mutex<World>,
}

impl Shared {
    /// The world, advanced to now.
    fn world(&self) -> MutexGuard<'_, World> {
        let mut world = self.world.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        world.advance(self);
        world
    }
}

/// A running fake cloud. Dropping it stops it.
pub struct FakeCloud {
    shared: Arc<Shared>,
    task: JoinHandle<()>,
    /// The HTTPS listener.
    https_task: JoinHandle<()>,
    /// The HTTPS listener whose certificate no client is given.
    untrusted_task: JoinHandle<()>,
    /// `https://127.0.0.1:PORT` of the untrusted listener.
    untrusted_url: String,
    /// The CA of the untrusted listener's certificate, PEM.
    untrusted_ca_pem: String,
    /// `https://127.0.0.1:PORT`.
    https_url: String,
    /// The CA of the HTTPS listener's certificate, PEM.
    ca_pem: String,
    /// The kubelets: aborting the task stops every daemon it runs.
    kubelets: JoinHandle<()>,
    /// What the fake machines run (their bcd): aborting the task stops them.
    machines: JoinHandle<()>,
    /// Where the daemons keep their state; removed last.
    _state: kubelet::StateRoot,
}

impl Drop for FakeCloud {
    fn drop(&mut self) {
        self.task.abort();
        self.https_task.abort();
        self.untrusted_task.abort();
        self.kubelets.abort();
        self.machines.abort();
        self.shared.world().gke.stop_servers();
    }
}

impl FakeCloud {
    /// Binds 127.0.0.1 on the configured port and serves until dropped.
    pub async fn start(config: FakeCloudConfig) -> std::io::Result<FakeCloud> {
        let listener = TcpListener::bind(("127.0.0.1", config.port)).await?;
        let base_url = format!("http://{}", listener.local_addr()?);
        let shared = Arc::new(Shared { base_url, world: Mutex::new(World::new(&config)), config });
        let router = Router::new()
            .merge(gke::routes())
            .merge(compute::routes())
            .merge(digitalocean::routes())
            .merge(oauth::routes())
            .merge(redfish::routes())
            .merge(fault_controls::routes())
            .merge(limit_controls::routes())
            .route("/_fake/images/{name}", axum::routing::get(image_route))
            .route("/_fake/inspect", axum::routing::get(inspect_route))
            .route("/_fake/service-account-key", axum::routing::get(key_route))
            .layer(axum::middleware::from_fn_with_state(shared.clone(), faults_layer))
            .with_state(shared.clone());
        let cloud_tls = tls::cloud_tls().map_err(std::io::Error::other)?;
        let (https_address, https_task) = tls::serve_tls(router.clone(), cloud_tls.server)?;
        let untrusted_tls = tls::untrusted_tls().map_err(std::io::Error::other)?;
        let (untrusted_address, untrusted_task) = tls::serve_tls(router.clone(), untrusted_tls.server)?;
        let task = tls::serve_plain(listener, router);
        let state = kubelet::StateRoot::new()?;
        let kubelets = tokio::spawn(kubelet::run(shared.clone(), state.0.clone()));
        let machines = tokio::spawn(redfish::os::run(shared.clone(), state.0.clone()));
        Ok(FakeCloud {
            shared,
            task,
            https_task,
            https_url: format!("https://{https_address}"),
            ca_pem: cloud_tls.ca_pem,
            untrusted_task,
            untrusted_url: format!("https://{untrusted_address}"),
            untrusted_ca_pem: untrusted_tls.ca_pem,
            kubelets,
            machines,
            _state: state,
        })
    }

    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub fn base_url(&self) -> &str {
        &self.shared.base_url
    }

    /// `https://127.0.0.1:PORT`, no trailing slash: the same API as [`FakeCloud::base_url`]
    /// over TLS, with a certificate of [`FakeCloud::ca_pem`]'s.
    pub fn https_url(&self) -> &str {
        &self.https_url
    }

    /// The PEM of the CA the HTTPS listener's certificate is of: a CA of this fake cloud's own,
    /// made at start.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The OAuth token endpoint (a service-account key's `token_uri`).
    pub fn token_uri(&self) -> String {
        format!("{}/token", self.shared.base_url)
    }

    /// A service-account JSON key for `name@project.iam.gserviceaccount.com` that the token
    /// endpoint accepts. The private key is a fixed test key: fake, and only for the fake.
    pub fn service_account_key(&self, project: &str, name: &str) -> String {
        let email = format!("{name}@{project}.iam.gserviceaccount.com");
        self.shared.world().oauth.register(&email);
        oauth::key_json(project, &email, &self.token_uri())
    }

    /// An access token for `email`, as the token endpoint would grant it (for gcloud).
    pub fn access_token(&self, email: &str) -> String {
        self.shared.world().oauth.grant(email)
    }

    /// Waits for `duration` added to every provider request.
    pub fn set_latency(&self, duration: Duration) {
        self.shared.world().faults.latency = duration;
    }

    /// Fails a share of the requests to routes containing `route`.
    pub fn set_error_rate(&self, route: &str, rate: f64, status: u16) {
        let mut world = self.shared.world();
        world.faults.error_rates.retain(|r| r.route != route);
        world.faults.error_rates.push(ErrorRate { route: route.to_owned(), rate, status });
    }

    /// Fails the next `verb` of `kind` `name` (`*` for any) as `failure` says. A
    /// [`Failure::Class`] reaches any call of any emulated API (the kinds and verbs are
    /// [`FakeCloud::fail_calls`]'s; `verb` may be `*` too); a refusal or an operation's error
    /// reaches only the calls whose emulator applies it (creates, updates, deletes; DigitalOcean
    /// and Compute Engine reads).
    pub fn fail_next(&self, kind: &str, verb: &str, name: &str, failure: Failure) {
        let scripted = ScriptedFailure { kind: kind.into(), verb: verb.into(), name: name.into(), failure };
        self.shared.world().faults.scripted.push(scripted);
    }

    /// Turns the rate limit on (`Some`) or off.
    pub fn set_rate_limit(&self, mode: Option<RateLimitMode>) {
        let mut world = self.shared.world();
        world.faults.rate_limit = mode;
        world.faults.window = None;
    }

    /// Sets the versions `location` offers.
    pub fn set_versions(&self, location: &str, versions: VersionCatalog) {
        self.shared.world().gke.catalogs.insert(location.to_owned(), versions);
    }

    /// Moves a cluster's control plane to `version` at once, as a release-channel auto-upgrade
    /// does; its node pools stay at their versions until they are upgraded. False if there is
    /// no such cluster.
    pub fn upgrade_cluster(&self, project: &str, location: &str, name: &str, version: &str) -> bool {
        self.shared.world().gke.force_version(project, location, name, version)
    }

    /// Makes a fake machine behind the Redfish BMC and returns its system's path
    /// (`/redfish/v1/Systems/<id>`: append it to [`FakeCloud::https_url`] for its BMC address).
    pub fn add_bmc_system(&self, spec: BmcSystemSpec) -> String {
        let mut world = self.shared.world();
        let number = world.next();
        format!("/redfish/v1/Systems/{}", world.redfish.add(number, spec))
    }

    /// What the Redfish BMC knows of the system `id` (`system-N`, the last part of its path):
    /// power, boot override, virtual CD, every boot (`boots`, with the media URL it booted
    /// from), how many times each drive was erased (`erased`, and by which sanitization type:
    /// `erasedBy`), what each drive holds (`disks`: `content`, `readOnly`) and how many requests
    /// it held while unresponsive (`heldRequests`).
    pub fn bmc_system(&self, id: &str) -> Option<Value> {
        let mut world = self.shared.world();
        world.redfish.machine_mut(id).map(|machine| machine.inspect())
    }

    /// Makes the BMC of system `id` hold every request without answering (true), or answer
    /// again. False if there is no such system.
    pub fn set_bmc_unresponsive(&self, id: &str, unresponsive: bool) -> bool {
        let mut world = self.shared.world();
        world.redfish.machine_mut(id).map(|machine| machine.unresponsive = unresponsive).is_some()
    }

    /// Makes the operating system of system `id` hang: it stays on, and what ran on it (its
    /// bcd) stops until the machine boots again (a reset or a power on). False if there is no
    /// such system.
    pub fn hang_bmc_system(&self, id: &str) -> bool {
        let mut world = self.shared.world();
        world.redfish.machine_mut(id).map(|machine| machine.hung = true).is_some()
    }

    /// Makes the system of the GKE node named `node` (as the cluster's API names it) hang: its
    /// pods' daemons stop until its instance is made again. False if there is no such node.
    pub fn hang_gke_node(&self, node: &str) -> bool {
        let mut world = self.shared.world();
        for (key, cluster) in world.gke.clusters.iter_mut() {
            let instance = cluster.nodes().into_iter().find(|n| kubeapi::node_name(&key.2, n) == node);
            if let Some(instance) = instance {
                return cluster.hang_instance(&instance.instance);
            }
        }
        false
    }

    /// Breaks the installed system of system `id`: it hangs now and at every boot from its
    /// disk, until a deploy's installer lays it again. False if there is no such system.
    pub fn break_bmc_system(&self, id: &str) -> bool {
        let mut world = self.shared.world();
        world.redfish.machine_mut(id).map(|machine| (machine.hung, machine.broken) = (true, true)).is_some()
    }

    /// Writes `text` on drive `drive` (`disk0`, `disk1`, `disk2`) of system `id`, as a tenant's
    /// system running on the machine would; `disks` of [`FakeCloud::bmc_system`] shows what
    /// each drive holds. False if there is no such system or drive, or the drive is read-only.
    pub fn write_bmc_disk(&self, id: &str, drive: &str, text: &str) -> bool {
        let mut world = self.shared.world();
        world.redfish.machine_mut(id).is_some_and(|machine| machine.write(drive, text))
    }

    /// Makes drive `drive` of system `id` read-only (true): its erase is accepted and leaves
    /// what it holds, as a failed or write-protected drive does. False if there is no such
    /// system.
    pub fn set_bmc_disk_read_only(&self, id: &str, drive: &str, read_only: bool) -> bool {
        let mut world = self.shared.world();
        world
            .redfish
            .machine_mut(id)
            .map(|machine| match read_only {
                true => machine.read_only.insert(drive.to_owned()),
                false => machine.read_only.remove(drive),
            })
            .is_some()
    }

    /// The Redfish BMC's sessions: how many are `open`, how many were `made`, the most open at
    /// once (`mostOpen`), logins `refused` past the `limit`, and sessions `loggedOut`.
    pub fn bmc_sessions(&self) -> Value {
        self.shared.world().redfish.sessions.inspect(Instant::now())
    }

    /// Sets how many sessions the Redfish BMC keeps open at once (4 unless a test says) and
    /// how long an unused one lives (30 minutes).
    pub fn set_bmc_session_limits(&self, limit: usize, timeout: Duration) {
        let mut world = self.shared.world();
        world.redfish.sessions.limit = limit;
        world.redfish.sessions.timeout = timeout;
    }

    /// Changes the credentials the BMC of system `id` takes, as its operator does at the BMC;
    /// the old ones are refused from then on. False if there is no such system.
    pub fn set_bmc_credentials(&self, id: &str, username: &str, password: &str) -> bool {
        let mut world = self.shared.world();
        world
            .redfish
            .machine_mut(id)
            .map(|machine| {
                machine.spec.username = username.to_owned();
                machine.spec.password = password.to_owned();
            })
            .is_some()
    }

    /// Makes the BMC of system `id` refuse every login with 401 (true), or accept its
    /// credentials again. False if there is no such system.
    pub fn set_bmc_refuses_login(&self, id: &str, refuses: bool) -> bool {
        let mut world = self.shared.world();
        world.redfish.machine_mut(id).map(|machine| machine.refuses_login = refuses).is_some()
    }

    /// A read-only snapshot of everything that exists, as JSON: GKE clusters (name, location,
    /// status, version, labels, network, node pools with the instances behind their nodes
    /// (`nodes`, `nodeGeneration`), the operations started on the cluster in order
    /// (`operations`), in-cluster objects and the bcd daemons running there,
    /// `kubernetes.daemons`), Compute Engine networks and subnetworks, DigitalOcean objects
    /// (load balancers with their droplet ids, tags and count of in-place `updates`, droplets,
    /// VPCs, certificates, volumes with their `actions`) and the Redfish systems.
    pub fn inspect(&self) -> Value {
        inspect(&self.shared)
    }
}

fn inspect(shared: &Shared) -> Value {
    let world = shared.world();
    json!({
        "gke": world.gke.inspect(),
        "compute": world.compute.inspect(),
        "digitalocean": world.digitalocean.inspect(),
        "redfish": world.redfish.inspect(),
    })
}

async fn inspect_route(State(shared): State<Arc<Shared>>) -> Response {
    axum::Json(inspect(&shared)).into_response()
}

/// `GET /_fake/service-account-key?project=P&name=N`: a key the token endpoint accepts, for
/// processes that reach a `bcctl fakecloud` over HTTP (the handle gives it in-process).
async fn key_route(
    State(shared): State<Arc<Shared>>,
    axum::extract::Query(query): axum::extract::Query<std::collections::BTreeMap<String, String>>,
) -> Response {
    let project = query.get("project").map(String::as_str).unwrap_or("bc-dev");
    let name = query.get("name").map(String::as_str).unwrap_or("reconciler");
    let email = format!("{name}@{project}.iam.gserviceaccount.com");
    shared.world().oauth.register(&email);
    json_response(
        200,
        serde_json::from_str(&oauth::key_json(project, &email, &format!("{}/token", shared.base_url)))
            .unwrap_or_default(),
    )
}

/// `GET /_fake/images/NAME`: a small stand-in for a boot image, for BMCs that fetch the media
/// they are given (sushy-tools does).
async fn image_route(axum::extract::Path(name): axum::extract::Path<String>) -> Response {
    let mut response = Response::new(Body::from(format!("fake boot image {name}\n")));
    response.headers_mut().insert("content-type", HeaderValue::from_static("application/octet-stream"));
    response
}

/// A random request id, as providers hand out.
fn request_id() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// The largest request body the fake reads before a fault decides on it.
const MAX_BODY: usize = 64 << 20;

/// Faults, before the emulators see a request: a failure class scripted for the call or in
/// force for it or its account; then (provider APIs only) the providers' own limits
/// (DigitalOcean's per token, GKE's per project), latency, the rate-limit fault and random
/// errors. Counts what each DigitalOcean token and Google project was answered.
async fn faults_layer(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    let family = Family::of(&path);
    if family == Family::Other {
        return next.run(request).await;
    }
    let id = request_id();
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, MAX_BODY).await else {
        return error_response(family, 413, "The request body is too large.", &id);
    };
    let token = bearer(&parts.headers).map(str::to_owned);
    let (call, failed) = {
        let mut world = shared.world();
        let email = token.as_deref().and_then(|token| world.oauth.account_of(token)).map(str::to_owned);
        let call =
            calls::identify(&parts.method, &path, token.as_deref().map(|token| (token, email.as_deref())), &body);
        let failed = world.faults.class_for(&call).map(|class| fault_answers::answer(&call, &class, &id));
        (call, failed)
    };
    let token = token.as_deref();
    if let Some(response) = failed {
        let budget = shared.world().digitalocean_tokens.peek(token, Instant::now());
        let response = with_provider_headers(response, family, None, budget, &id);
        return counted(&shared, &call, token, response);
    }
    let request = Request::from_parts(parts, Body::from(body));
    if !matches!(family, Family::Gke | Family::Compute | Family::DigitalOcean) {
        return next.run(request).await;
    }
    let (latency, budget, over_limit, decision, failure) = {
        let mut world = shared.world();
        let (budget, over_limit) = provider_limits(&mut world, &call, token, &id);
        let decision = world.faults.rate(Instant::now());
        (world.faults.latency, budget, over_limit, decision, world.faults.random_failure(&path))
    };
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let response = match (over_limit, decision, failure) {
        (Some(refused), _, _) => refused,
        (_, Some(d), _) if !d.allowed => {
            let mut refused = error_response(family, 429, "API rate limit exceeded.", &id);
            refused.headers_mut().insert("retry-after", HeaderValue::from(d.reset_in));
            refused
        }
        (_, _, Some(status)) => error_response(family, status, "injected failure", &id),
        _ => next.run(request).await,
    };
    let response = with_provider_headers(response, family, decision, budget, &id);
    counted(&shared, &call, token, response)
}

/// The providers' own limits on `call`: the budget it was counted against (for DigitalOcean's
/// headers), and the provider's 429 if it is past one. DigitalOcean counts the requests of the
/// tokens it accepts (an unknown token is refused 401 by the emulator); GKE those of a project.
fn provider_limits(
    world: &mut World,
    call: &calls::Call,
    token: Option<&str>,
    id: &str,
) -> (Option<rate_windows::Verdict>, Option<Response>) {
    let now = Instant::now();
    match call.family {
        Family::DigitalOcean => match world.digitalocean_tokens.admit(token, now) {
            Some(verdict) if !verdict.allowed => (Some(verdict), Some(do_limits::too_many_requests(&verdict, now, id))),
            Some(verdict) => (Some(verdict), None),
            None => (world.digitalocean_tokens.peek(token, now), None),
        },
        Family::Gke => {
            let project = call.accounts.first().map(String::as_str).unwrap_or_default();
            match world.gke_budgets.admit(project, now) {
                Some(verdict) if !verdict.allowed => {
                    let class = FaultClass::Throttled { retry_after: verdict.retry_after };
                    (None, Some(fault_answers::answer(call, &class, id)))
                }
                _ => (None, None),
            }
        }
        _ => (None, None),
    }
}

/// Counts `response` for the DigitalOcean token or Google project `call` was made on (a
/// connection closed unanswered is no answer).
fn counted(shared: &Shared, call: &calls::Call, token: Option<&str>, response: Response) -> Response {
    if response.extensions().get::<fault_answers::HangUp>().is_some() {
        return response;
    }
    let status = response.status().as_u16();
    let mut world = shared.world();
    match call.family {
        Family::DigitalOcean => world.digitalocean_tokens.record(token, status),
        Family::Gke => {
            let project = call.accounts.first().cloned().unwrap_or_default();
            world.gke_counts.entry(project).or_default().record(status);
        }
        _ => {}
    }
    response
}

/// The headers every answer of the API carries and an answer did not set: the request id, and
/// DigitalOcean's rate-limit headers: the rate-limit fault's if it is on, else the token's
/// budget's.
fn with_provider_headers(
    mut response: Response,
    family: Family,
    decision: Option<faults::RateDecision>,
    budget: Option<rate_windows::Verdict>,
    id: &str,
) -> Response {
    let headers = response.headers_mut();
    if !headers.contains_key("x-request-id") {
        headers.insert("x-request-id", HeaderValue::from_str(id).expect("hex is a header value"));
    }
    if family != Family::DigitalOcean || headers.contains_key("ratelimit-limit") {
        return response;
    }
    if let (None, Some(budget)) = (decision, budget) {
        return do_limits::with_rate_headers(response, &budget, Instant::now());
    }
    let d = decision.unwrap_or(faults::RateDecision { allowed: true, limit: 5000, remaining: 4999, reset_in: 60 });
    let reset =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_secs() + d.reset_in;
    headers.insert("ratelimit-limit", HeaderValue::from(d.limit));
    headers.insert("ratelimit-remaining", HeaderValue::from(d.remaining));
    headers.insert("ratelimit-reset", HeaderValue::from(reset));
    response
}

/// An error in the shape of the API the path belongs to.
fn error_response(family: Family, status: u16, message: &str, id: &str) -> Response {
    match family {
        Family::DigitalOcean => digitalocean::error(status, message, id),
        Family::Compute => compute::error(status, "injected", message),
        _ => gke::error(status, message),
    }
}

/// A JSON response with a status.
fn json_response(status: u16, body: Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert("content-type", HeaderValue::from_static("application/json"));
    response
}

/// The bearer token of a request, if it has one.
fn bearer(headers: &http::HeaderMap) -> Option<&str> {
    headers.get("authorization")?.to_str().ok()?.strip_prefix("Bearer ").map(str::trim)
}
