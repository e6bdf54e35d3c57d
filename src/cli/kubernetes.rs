//! `bcctl clusters ...` and `bcctl nodepools ...`: Kubernetes clusters and their node pools, with
//! `--wait` that follows a cluster until it is ready (or deleted) and a `credentials` form that
//! writes the kubeconfig to a file only its owner reads.

use serde_json::Value;

use super::failure;
use super::follow::{Followed, answer, field};
use super::plan::{self, Change, DryRun};
use super::tracked::{CreateCommand, DeleteCommand, GetCommand, Tracked, print_list, show, tracked};
use super::{Cli, complete, connect, output};
use crate::proto::compute::kubernetes_clusters_client::KubernetesClustersClient;
use crate::proto::compute::kubernetes_node_pools_client::KubernetesNodePoolsClient;
use crate::proto::compute::{
    CreateKubernetesClusterRequest, CreateKubernetesNodePoolRequest, DeleteKubernetesClusterRequest,
    DeleteKubernetesNodePoolRequest, GetKubernetesClusterRequest, GetKubernetesNodePoolRequest, KubernetesAccelerators,
    KubernetesAutoscaling, KubernetesCluster, KubernetesCredentials, KubernetesCredentialsRequest, KubernetesNodePool,
    KubernetesNodePoolSpec, KubernetesTaint, KubernetesVersionsRequest, ListKubernetesClustersRequest,
    ListKubernetesClustersResponse, ListKubernetesNodePoolsRequest, UpdateKubernetesClusterRequest,
    UpdateKubernetesNodePoolRequest,
};

/// A cluster's own `create` flags.
#[derive(clap::Args, Debug)]
pub struct ClusterSpec {
    /// `standard` or `autopilot`.
    #[arg(long, default_value = "standard")]
    mode: String,
    /// A zone of the pool's account, or the region of one.
    #[arg(long)]
    location: String,
    /// `rapid`, `regular` (default), `stable` or `extended`.
    #[arg(long, default_value = "")]
    release_channel: String,
    /// A version pin (`1.33` or a full version).
    #[arg(long, default_value = "")]
    version: String,
    /// A node pool, as `name=general,machine-type=e2-standard-4,count=2` with optional
    /// `min=1,max=3`, `zones=a;b` and `spot`; repeat for more.
    #[arg(long = "node-pool")]
    node_pools: Vec<String>,
    /// A CIDR that may reach the control plane; repeat for more.
    #[arg(long = "authorized-network")]
    authorized_networks: Vec<String>,
    /// Nodes without public addresses.
    #[arg(long)]
    private_nodes: bool,
    /// Free text.
    #[arg(long, default_value = "")]
    description: String,
}

/// The cluster commands.
#[derive(clap::Subcommand, Debug)]
pub enum ClustersCommand {
    /// Creates a cluster; with `--wait`, follows it until it is ready.
    Create(CreateCommand<KubernetesCluster, ClusterSpec>),
    /// Lists the tenant's clusters.
    List {
        /// The tenant.
        #[arg(long)]
        tenant: String,
        /// Also list deleted clusters.
        #[arg(long)]
        include_deleted: bool,
    },
    /// Shows one cluster.
    Get(GetCommand<KubernetesCluster>),
    /// Changes the version pin, release channel, authorized networks or description.
    Update {
        /// The tenant.
        #[arg(long)]
        tenant: String,
        /// The cluster.
        #[arg(add = complete::clusters())]
        cluster_id: String,
        /// The new version pin.
        #[arg(long)]
        version: Option<String>,
        /// The new release channel.
        #[arg(long)]
        release_channel: Option<String>,
        /// The new authorized networks (repeat); `--clear-authorized-networks` for any address.
        #[arg(long = "authorized-network")]
        authorized_networks: Vec<String>,
        /// Let any address reach the control plane.
        #[arg(long, conflicts_with = "authorized_networks")]
        clear_authorized_networks: bool,
        /// The new description.
        #[arg(long)]
        description: Option<String>,
        /// Follow the cluster until it is ready again.
        #[arg(long, conflicts_with = "dry_run")]
        wait: bool,
        #[command(flatten)]
        dry_run: DryRun,
    },
    /// Deletes a cluster; with `--wait`, follows it until it is deleted.
    Delete(DeleteCommand<KubernetesCluster>),
    /// Issues a kubeconfig; `--kubeconfig-file` writes it to a file (mode 0600).
    Credentials {
        /// The tenant.
        #[arg(long)]
        tenant: String,
        /// The cluster.
        #[arg(add = complete::clusters())]
        cluster_id: String,
        /// `view` (default), `edit` or `admin`.
        #[arg(long, default_value = "")]
        role: String,
        /// Lifetime in seconds, 600 to 86400 (default 3600).
        #[arg(long, default_value_t = 0)]
        ttl_seconds: i32,
        /// Where to write the kubeconfig; without it, it is printed.
        #[arg(long)]
        kubeconfig_file: Option<std::path::PathBuf>,
    },
    /// The Kubernetes versions a pool's location offers.
    Versions {
        /// The tenant.
        #[arg(long)]
        tenant: String,
        /// The provider pool.
        #[arg(long, add = complete::pools())]
        pool: String,
        /// The location.
        #[arg(long)]
        location: String,
    },
}

/// The node-pool commands.
#[derive(clap::Subcommand, Debug)]
pub enum NodePoolsCommand {
    /// Adds a node pool to a standard cluster.
    Create {
        /// The tenant.
        #[arg(long)]
        tenant: String,
        /// The cluster.
        #[arg(long, add = complete::clusters())]
        cluster: String,
        /// The pool, as `name=extra,machine-type=e2-medium,count=1` with optional `min=1,max=3`,
        /// `zones=a;b` and `spot`.
        spec: String,
        /// The idempotency key (defaults to the cluster and the pool's name: running the command
        /// again is a retry).
        #[arg(long)]
        idempotency_key: Option<String>,
    },
    /// Lists a cluster's node pools.
    List {
        /// The tenant.
        #[arg(long)]
        tenant: String,
        /// The cluster.
        #[arg(long, add = complete::clusters())]
        cluster: String,
    },
    /// Shows one node pool; with `--wait`, once it is ready (or in the state given).
    Get {
        /// The tenant.
        #[arg(long)]
        tenant: String,
        /// The cluster.
        #[arg(long, add = complete::clusters())]
        cluster: String,
        /// The node pool.
        #[arg(add = complete::node_pools())]
        node_pool_id: String,
        /// Follow the node pool until it is ready, or until the state given (`--wait=deleted`).
        #[arg(long, value_name = "STATE", num_args = 0..=1, require_equals = true, default_missing_value = "ready")]
        wait: Option<String>,
    },
    /// Changes a node pool in place: size, autoscaling, machine type, boot disk, accelerators,
    /// zones, labels or taints; with `--wait`, follows the node pool until it is ready again.
    Update {
        /// The tenant.
        #[arg(long)]
        tenant: String,
        /// The cluster.
        #[arg(long, add = complete::clusters())]
        cluster: String,
        /// The node pool.
        #[arg(add = complete::node_pools())]
        node_pool_id: String,
        /// The new node count (per zone) of a pool without autoscaling; with it, the autoscaler
        /// sets the count (give `--no-autoscaling` too to fix it).
        #[arg(long)]
        count: Option<i32>,
        /// New autoscaling bounds, `min:max`.
        #[arg(long)]
        autoscaling: Option<String>,
        /// Turn autoscaling off.
        #[arg(long, conflicts_with = "autoscaling")]
        no_autoscaling: bool,
        /// The new machine type.
        #[arg(long)]
        machine_type: Option<String>,
        /// The new boot disk size in GiB.
        #[arg(long)]
        disk_gib: Option<i32>,
        /// The new boot disk type.
        #[arg(long)]
        disk_type: Option<String>,
        /// The new accelerators on every node, `type:count`.
        #[arg(long)]
        accelerator: Option<String>,
        /// Take the accelerators off the nodes.
        #[arg(long, conflicts_with = "accelerator")]
        no_accelerators: bool,
        /// A zone the nodes run in, replacing the old ones; repeat for more.
        #[arg(long = "zone")]
        zones: Vec<String>,
        /// Run the nodes in the cluster's default zones.
        #[arg(long, conflicts_with = "zones")]
        default_zones: bool,
        /// A node label `key=value`, replacing the old labels; repeat for more.
        #[arg(long = "label")]
        labels: Vec<String>,
        /// Remove every node label.
        #[arg(long, conflicts_with = "labels")]
        clear_labels: bool,
        /// A taint `key=value:Effect` (or `key:Effect`), replacing the old taints; repeat for more.
        #[arg(long = "taint")]
        taints: Vec<String>,
        /// Remove every taint.
        #[arg(long, conflicts_with = "taints")]
        clear_taints: bool,
        /// Follow the node pool until it is ready again.
        #[arg(long, conflicts_with = "dry_run")]
        wait: bool,
        #[command(flatten)]
        dry_run: DryRun,
    },
    /// Deletes a node pool.
    Delete {
        /// The tenant.
        #[arg(long)]
        tenant: String,
        /// The cluster.
        #[arg(long, add = complete::clusters())]
        cluster: String,
        /// The node pool.
        #[arg(add = complete::node_pools())]
        node_pool_id: String,
        #[command(flatten)]
        dry_run: DryRun,
    },
}

const POOL: &str = "bettercompute.compute.v1.KubernetesNodePool";

/// A node pool, as `--wait` follows it.
const FOLLOWED_POOL: Followed =
    Followed { what: "node pool", message: POOL, progress: super::follow::state_and_message };
const POOL_LIST: &str = "bettercompute.compute.v1.ListKubernetesNodePoolsResponse";
const VERSIONS: &str = "bettercompute.compute.v1.KubernetesVersions";

/// Parses a taint, `key=value:Effect` or `key:Effect`.
pub fn parse_taint(text: &str) -> Result<KubernetesTaint, String> {
    let (key_value, effect) = text.rsplit_once(':').ok_or(format!("the taint {text:?} is key=value:Effect"))?;
    let (key, value) = key_value.split_once('=').unwrap_or((key_value, ""));
    Ok(KubernetesTaint { key: key.to_owned(), value: value.to_owned(), effect: effect.to_owned() })
}

/// Parses a node label, `key=value`.
pub(super) fn parse_label(text: &str) -> Result<(String, String), String> {
    let (key, value) = text.split_once('=').ok_or(format!("the label {text:?} is key=value"))?;
    Ok((key.to_owned(), value.to_owned()))
}

/// Parses accelerators, `type:count`.
fn parse_accelerators(text: &str) -> Result<KubernetesAccelerators, String> {
    let (kind, count) = text.split_once(':').ok_or(format!("the accelerators {text:?} are type:count"))?;
    let count = count.parse().map_err(|_| format!("the accelerator count {count:?} is not a number"))?;
    Ok(KubernetesAccelerators { r#type: kind.to_owned(), count })
}

/// Parses `name=...,machine-type=...,count=N[,min=N,max=N][,zones=a;b][,spot][,disk-gib=N]
/// [,disk-type=T][,accelerators=type:count][,labels=k=v;k=v][,taints=k=v:Effect;k:Effect]`.
pub fn parse_pool(text: &str) -> Result<KubernetesNodePoolSpec, String> {
    let mut spec = KubernetesNodePoolSpec::default();
    let (mut min, mut max) = (None, None);
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let (key, value) = part.split_once('=').unwrap_or((part, ""));
        let number = |v: &str| v.parse::<i32>().map_err(|_| format!("{key}={v:?} is not a number"));
        match key {
            "name" => spec.name = value.to_owned(),
            "machine-type" => spec.machine_type = value.to_owned(),
            "count" => spec.node_count = Some(number(value)?),
            "min" => min = Some(number(value)?),
            "max" => max = Some(number(value)?),
            "disk-gib" => spec.disk_gib = number(value)?,
            "disk-type" => spec.disk_type = value.to_owned(),
            "accelerators" => spec.accelerators = Some(parse_accelerators(value)?),
            "zones" => spec.zones = value.split(';').map(str::to_owned).collect(),
            "labels" => spec.labels = value.split(';').map(parse_label).collect::<Result<_, _>>()?,
            "taints" => spec.taints = value.split(';').map(parse_taint).collect::<Result<_, _>>()?,
            "spot" => spec.spot = true,
            other => return Err(format!("unknown node pool field {other:?} in {text:?}")),
        }
    }
    if min.is_some() || max.is_some() {
        spec.autoscaling = Some(KubernetesAutoscaling { min_nodes: min, max_nodes: max });
    }
    Ok(spec)
}

/// The `update_mask` naming the `(field, given)` pairs given: a flag that clears a list (or turns
/// a setting off) names its field with no value, which a mask says and an empty list cannot. No
/// mask when nothing is given, so that the server answers which fields it takes.
fn update_mask(fields: &[(&str, bool)]) -> Option<prost_types::FieldMask> {
    let paths: Vec<String> = fields.iter().filter(|(_, given)| *given).map(|(field, _)| (*field).to_owned()).collect();
    (!paths.is_empty()).then_some(prost_types::FieldMask { paths })
}

/// The line `--wait` prints: the cluster's state and message, and each node pool's state.
fn progress(json: &Value) -> String {
    let pools = json["nodePools"].as_array().map(Vec::as_slice).unwrap_or_default();
    let pools: Vec<String> = pools.iter().map(|p| format!("{}={}", field(p, "name"), field(p, "state"))).collect();
    format!("{} {} [{}]", field(json, "state"), field(json, "message"), pools.join(" "))
}

tracked! {
    KubernetesCluster in KubernetesClustersClient: "cluster", progress progress;
    get(GetKubernetesClusterRequest), delete(DeleteKubernetesClusterRequest) { cluster_id };
    list(ListKubernetesClustersRequest) -> ListKubernetesClustersResponse { "clusters" } paged(clusters);
    create(CreateKubernetesClusterRequest) pool "The provider pool", name "The cluster's name",
        key "The idempotency key (defaults to the name: running the command again is a retry)";
    help "CLUSTER_ID" "The cluster", deleted "Also list deleted clusters", follow "the cluster";
}

/// Runs a cluster command.
pub async fn clusters(cli: &Cli, command: &ClustersCommand) -> Result<(), String> {
    let mut client = KubernetesClustersClient::new(connect(cli).await?);
    let (cluster, tenant, until) = match command {
        ClustersCommand::Get(get) => return get.run(cli, &mut client).await,
        ClustersCommand::Delete(delete) => return delete.run(cli, &mut client).await,
        ClustersCommand::Create(create) => {
            let spec = &create.spec;
            let request = CreateKubernetesClusterRequest {
                tenant_id: create.tenant.clone(),
                pool_id: create.pool.clone(),
                name: create.name.clone(),
                mode: spec.mode.clone(),
                location: spec.location.clone(),
                release_channel: spec.release_channel.clone(),
                version: spec.version.clone(),
                authorized_networks: spec.authorized_networks.clone(),
                private_nodes: spec.private_nodes,
                description: spec.description.clone(),
                node_pools: spec.node_pools.iter().map(|p| parse_pool(p)).collect::<Result<_, _>>()?,
                idempotency_key: create.idempotency_key(),
                ..Default::default()
            };
            return create.run(cli, &mut client, request).await;
        }
        ClustersCommand::Update {
            tenant,
            cluster_id,
            version,
            release_channel,
            authorized_networks,
            clear_authorized_networks,
            description,
            wait,
            dry_run,
        } => {
            let request = UpdateKubernetesClusterRequest {
                update_mask: update_mask(&[
                    ("version", version.is_some()),
                    ("release_channel", release_channel.is_some()),
                    ("authorized_networks", !authorized_networks.is_empty() || *clear_authorized_networks),
                    ("description", description.is_some()),
                ]),
                tenant_id: tenant.clone(),
                cluster_id: cluster_id.clone(),
                version: version.clone(),
                release_channel: release_channel.clone(),
                authorized_networks: authorized_networks.clone(),
                description: description.clone(),
                ..Default::default()
            };
            if dry_run.dry_run {
                return plan::show(cli, &answer(client.plan(request.planned()).await)?);
            }
            (answer(client.update(request).await)?, tenant, wait.then_some("ready"))
        }
        ClustersCommand::List { tenant, include_deleted } => {
            let list = KubernetesCluster::list(&mut client, tenant.clone(), String::new(), *include_deleted).await?;
            return print_list::<KubernetesCluster>(cli, &list);
        }
        ClustersCommand::Credentials { tenant, cluster_id, role, ttl_seconds, kubeconfig_file } => {
            let request = KubernetesCredentialsRequest {
                tenant_id: tenant.clone(),
                cluster_id: cluster_id.clone(),
                role: role.clone(),
                ttl_seconds: *ttl_seconds,
            };
            let issued = answer(client.credentials(request).await)?;
            match kubeconfig_file {
                Some(path) => {
                    write_private(path, &issued.kubeconfig)?;
                    eprintln!("wrote a {} kubeconfig to {} ({})", issued.role, path.display(), expiry(&issued));
                }
                None => output::emit(&format!("{}\n", issued.kubeconfig)),
            }
            return Ok(());
        }
        ClustersCommand::Versions { tenant, pool, location } => {
            let request = KubernetesVersionsRequest {
                tenant_id: tenant.clone(),
                pool_id: pool.clone(),
                location: location.clone(),
            };
            let versions = answer(client.versions(request).await)?;
            return output::print_list(cli.output, &versions, VERSIONS, "channels");
        }
    };
    show(cli, &client, tenant, cluster, until).await
}

/// When a kubeconfig's token expires: `expires at 2026-12-01T08:42:20Z (in 1h)`.
fn expiry(issued: &KubernetesCredentials) -> String {
    let json = output::to_json(issued, "bettercompute.compute.v1.KubernetesCredentials");
    let at = &json["expiresAt"];
    match super::when::parse(at) {
        Some(seconds) => {
            let exact = super::when::to_the_second(at.as_str().unwrap_or_default());
            format!("expires at {exact} ({})", super::when::relative(seconds))
        }
        None => "no expiry given".to_owned(),
    }
}

/// Writes `text` to `path`, readable by its owner only: a kubeconfig holds a bearer token.
fn write_private(path: &std::path::Path, text: &str) -> Result<(), String> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    file.write_all(text.as_bytes()).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The node pool `node_pool_id` of `cluster`.
async fn get_pool(
    client: &mut KubernetesNodePoolsClient<super::AuthedChannel>,
    tenant: &str,
    cluster: &str,
    node_pool_id: &str,
) -> Result<KubernetesNodePool, String> {
    let request = GetKubernetesNodePoolRequest {
        tenant_id: tenant.to_owned(),
        cluster_id: cluster.to_owned(),
        node_pool_id: node_pool_id.to_owned(),
    };
    answer(client.get(request).await)
}

/// `--count` alone on a pool the autoscaler sizes: GKE would take the count and the autoscaler
/// move it again at once, so it is refused, naming the flags that do what was meant.
fn refuse_count_on_autoscaling(pool: &KubernetesNodePool) -> Result<(), String> {
    let Some(bounds) = &pool.autoscaling else { return Ok(()) };
    let bound = |n: Option<i32>| n.map_or_else(|| "?".to_owned(), |n| n.to_string());
    Err(format!(
        "node pool {:?} autoscales between {} and {} nodes, so --count alone would not hold: add \
         --no-autoscaling to fix its size at --count, or change the bounds with --autoscaling MIN:MAX",
        pool.name,
        bound(bounds.min_nodes),
        bound(bounds.max_nodes)
    ))
}

/// Runs a node-pool command.
pub async fn node_pools(cli: &Cli, command: &NodePoolsCommand) -> Result<(), String> {
    let mut client = KubernetesNodePoolsClient::new(connect(cli).await?);
    let pool = match command {
        NodePoolsCommand::Create { tenant, cluster, spec, idempotency_key } => {
            let spec = parse_pool(spec)?;
            let (idempotency_key_given, name) = (idempotency_key, spec.name.clone());
            let idempotency_key = idempotency_key.clone().unwrap_or_else(|| format!("{cluster}.{}", spec.name));
            let request = CreateKubernetesNodePoolRequest {
                tenant_id: tenant.clone(),
                cluster_id: cluster.clone(),
                name: spec.name,
                machine_type: spec.machine_type,
                node_count: spec.node_count,
                autoscaling: spec.autoscaling,
                disk_gib: spec.disk_gib,
                disk_type: spec.disk_type,
                spot: spec.spot,
                accelerators: spec.accelerators,
                zones: spec.zones,
                labels: spec.labels,
                taints: spec.taints,
                idempotency_key,
            };
            match client.create(request).await {
                Err(status) => {
                    let error = bcd::api_error::ApiError::from_status(&status);
                    let found = match failure::conflicting_id(&error) {
                        Some(id) => get_pool(&mut client, tenant, cluster, &id).await.ok().map(|p| (id, p.state)),
                        None => None,
                    };
                    let existing = found.as_ref().map(|(id, state)| (id.as_str(), state.as_str()));
                    let key_given = idempotency_key_given.is_some();
                    return Err(failure::create_refused(&error, "node pool", &name, key_given, existing));
                }
                created => created,
            }
        }
        NodePoolsCommand::Get { tenant, cluster, node_pool_id, wait } => {
            if let Some(until) = wait {
                let json = FOLLOWED_POOL
                    .wait_for(node_pool_id, until, || {
                        let mut client = client.clone();
                        async move { get_pool(&mut client, tenant, cluster, node_pool_id).await }
                    })
                    .await?;
                output::print(cli.output, &json, std::slice::from_ref(&json));
                return Ok(());
            }
            let request = GetKubernetesNodePoolRequest {
                tenant_id: tenant.clone(),
                cluster_id: cluster.clone(),
                node_pool_id: node_pool_id.clone(),
            };
            client.get(request).await
        }
        NodePoolsCommand::Update {
            tenant,
            cluster,
            node_pool_id,
            count,
            autoscaling,
            no_autoscaling,
            machine_type,
            disk_gib,
            disk_type,
            accelerator,
            no_accelerators,
            zones,
            default_zones,
            labels,
            clear_labels,
            taints,
            clear_taints,
            wait,
            dry_run,
        } => {
            if count.is_some() && autoscaling.is_none() && !*no_autoscaling && !dry_run.dry_run {
                refuse_count_on_autoscaling(&get_pool(&mut client, tenant, cluster, node_pool_id).await?)?;
            }
            let autoscaling = autoscaling
                .as_deref()
                .map(|bounds| {
                    let (min, max) = bounds.split_once(':').ok_or("--autoscaling is min:max")?;
                    Ok::<_, String>(KubernetesAutoscaling {
                        min_nodes: Some(min.parse().map_err(|_| "min is a number")?),
                        max_nodes: Some(max.parse().map_err(|_| "max is a number")?),
                    })
                })
                .transpose()?;
            let request = UpdateKubernetesNodePoolRequest {
                update_mask: update_mask(&[
                    ("node_count", count.is_some()),
                    ("autoscaling", autoscaling.is_some() || *no_autoscaling),
                    ("machine_type", machine_type.is_some()),
                    ("disk_gib", disk_gib.is_some()),
                    ("disk_type", disk_type.is_some()),
                    ("accelerators", accelerator.is_some() || *no_accelerators),
                    ("zones", !zones.is_empty() || *default_zones),
                    ("labels", !labels.is_empty() || *clear_labels),
                    ("taints", !taints.is_empty() || *clear_taints),
                ]),
                tenant_id: tenant.clone(),
                cluster_id: cluster.clone(),
                node_pool_id: node_pool_id.clone(),
                node_count: *count,
                autoscaling,
                machine_type: machine_type.clone(),
                disk_gib: *disk_gib,
                disk_type: disk_type.clone(),
                accelerators: accelerator.as_deref().map(parse_accelerators).transpose()?,
                zones: zones.clone(),
                labels: labels.iter().map(|l| parse_label(l)).collect::<Result<_, _>>()?,
                taints: taints.iter().map(|t| parse_taint(t)).collect::<Result<_, _>>()?,
                ..Default::default()
            };
            if dry_run.dry_run {
                return plan::show(cli, &answer(client.plan(request.planned()).await)?);
            }
            let updated = answer(client.update(request).await)?;
            if *wait {
                // The pool as the wait left it: the update's answer still says `updating`.
                let json = FOLLOWED_POOL
                    .wait_for(&updated.id, "ready", || {
                        let mut client = client.clone();
                        async move { get_pool(&mut client, tenant, cluster, node_pool_id).await }
                    })
                    .await?;
                output::print(cli.output, &json, std::slice::from_ref(&json));
                return Ok(());
            }
            Ok(tonic::Response::new(updated))
        }
        NodePoolsCommand::Delete { tenant, cluster, node_pool_id, dry_run } => {
            let request = DeleteKubernetesNodePoolRequest {
                tenant_id: tenant.clone(),
                cluster_id: cluster.clone(),
                node_pool_id: node_pool_id.clone(),
                validate_only: false,
            };
            if dry_run.dry_run {
                return plan::show(cli, &answer(client.plan(request.planned()).await)?);
            }
            client.delete(request).await
        }
        NodePoolsCommand::List { tenant, cluster } => {
            let request = ListKubernetesNodePoolsRequest {
                tenant_id: tenant.clone(),
                cluster_id: cluster.clone(),
                include_deleted: false,
            };
            let list = answer(client.list(request).await)?;
            return output::print_list(cli.output, &list, POOL_LIST, "nodePools");
        }
    };
    output::print_one(cli.output, &answer(pool)?, POOL)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mask_names_what_was_given_and_nothing_else() {
        let mask = update_mask(&[("version", false), ("authorized_networks", true), ("description", true)]);
        assert_eq!(mask.unwrap().paths, ["authorized_networks", "description"]);
        assert_eq!(update_mask(&[("version", false)]), None);
    }

    #[test]
    fn node_pool_specs_parse_from_one_argument() {
        let spec = parse_pool("name=batch,machine-type=e2-standard-8,count=1,min=1,max=3,zones=a-1;a-2,spot").unwrap();
        assert_eq!((spec.name.as_str(), spec.node_count, spec.spot), ("batch", Some(1), true));
        assert_eq!(spec.zones, ["a-1", "a-2"]);
        assert_eq!(spec.autoscaling.unwrap().max_nodes, Some(3));
        assert!(parse_pool("name=x,colour=blue").is_err());
        let full = parse_pool(
            "name=gpu,machine-type=g2-standard-4,count=1,disk-type=pd-ssd,accelerators=nvidia-l4:1,\
             labels=team=ml;tier=gpu,taints=gpu=true:NoSchedule;spare:PreferNoSchedule",
        )
        .unwrap();
        assert_eq!((full.disk_type.as_str(), full.accelerators.unwrap().count), ("pd-ssd", 1));
        assert_eq!(full.labels.len(), 2);
        assert_eq!(
            full.taints[0],
            KubernetesTaint { key: "gpu".into(), value: "true".into(), effect: "NoSchedule".into() }
        );
        assert_eq!(full.taints[1].value, "");
    }
}
