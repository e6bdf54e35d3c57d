//! `bcctl loadbalancers ...`: load balancers, with `--wait` that follows one until it is ready (or
//! deleted), printing each new state.

use prost_types::FieldMask;
use serde_json::Value;

use super::follow::{answer, field};
use super::plan::{self, Change, DryRun};
use super::tracked::{CreateCommand, DeleteCommand, GetCommand, ListCommand, show, tracked};
use super::{Cli, connect};
use crate::proto::compute::load_balancers_client::LoadBalancersClient;
use crate::proto::compute::{
    CreateLoadBalancerRequest, DeleteLoadBalancerRequest, GetLoadBalancerRequest, ListLoadBalancersRequest,
    ListLoadBalancersResponse, LoadBalancer, LoadBalancerDomain, LoadBalancerForwardingRule, LoadBalancerHealthCheck,
    LoadBalancerSourceRanges, LoadBalancerStickySessions, LoadBalancerTargets, UpdateLoadBalancerRequest,
};

/// A load balancer's own `create` flags.
#[derive(clap::Args, Debug)]
pub struct LoadBalancerSpec {
    /// `regional` (default) or `global`.
    #[arg(long, default_value = "regional")]
    scope: String,
    /// The region (regional only).
    #[arg(long, default_value = "")]
    region: String,
    /// A subnet of a tenant network to live on (regional only).
    #[arg(long, default_value = "")]
    subnet: String,
    /// The project.
    #[arg(long, default_value = "")]
    project: String,
    /// Free text.
    #[arg(long, default_value = "")]
    description: String,
    /// Redirect HTTP to HTTPS.
    #[arg(long)]
    redirect_http_to_https: bool,
    #[command(flatten)]
    parts: Parts,
}

/// The parts of a load balancer that create and update both take.
#[derive(clap::Args, Debug, Default)]
pub struct Parts {
    /// Target every instance of the tenant in the pool and region (on the load balancer's network).
    #[arg(long)]
    pool_targets: bool,
    /// Target this instance (`inst_...`); repeat for more.
    #[arg(long = "instance")]
    instances: Vec<String>,
    /// (Global) target this regional load balancer (`plb_...`); repeat for more.
    #[arg(long = "target-load-balancer")]
    target_load_balancers: Vec<String>,
    /// A forwarding rule, `entry:port:target:port[,cert=pcert_...][,passthrough]` (`http:80:http:8080`);
    /// repeat for more.
    #[arg(long = "forward")]
    forwarding: Vec<String>,
    /// The health check, `protocol:port[/path][,interval=S][,timeout=S][,healthy=N][,unhealthy=N]`.
    #[arg(long)]
    health_check: Option<String>,
    /// Sticky sessions by cookie, `name:ttl-seconds`.
    #[arg(long)]
    sticky: Option<String>,
    /// An IPv4 CIDR allowed to reach it; repeat for more.
    #[arg(long = "allow")]
    allow: Vec<String>,
    /// An IPv4 CIDR denied; repeat for more.
    #[arg(long = "deny")]
    deny: Vec<String>,
    /// (Global) a domain it serves, `name[,cert=pcert_...]`; repeat for more.
    #[arg(long = "domain")]
    domains: Vec<String>,
}

/// The load balancer commands.
#[derive(clap::Subcommand, Debug)]
pub enum LoadBalancersCommand {
    /// Creates a load balancer; with `--wait`, follows it until it is ready.
    Create(CreateCommand<LoadBalancer, LoadBalancerSpec>),
    /// Lists the tenant's load balancers.
    List(ListCommand<LoadBalancer>),
    /// Shows one load balancer.
    Get(GetCommand<LoadBalancer>),
    /// Replaces the parts given; with `--wait`, follows it until it is ready again.
    Update {
        /// The tenant.
        #[arg(long)]
        tenant: String,
        /// The load balancer.
        load_balancer_id: String,
        #[command(flatten)]
        parts: Parts,
        /// Redirect HTTP to HTTPS (`true`) or stop (`false`).
        #[arg(long)]
        redirect_http_to_https: Option<bool>,
        /// Turn sticky sessions off.
        #[arg(long, conflicts_with = "sticky")]
        clear_sticky_sessions: bool,
        /// Replace the domains even with none: without `--domain`, the load balancer serves none.
        #[arg(long)]
        set_domains: bool,
        /// Follow it until it is ready again.
        #[arg(long, conflicts_with = "dry_run")]
        wait: bool,
        #[command(flatten)]
        dry_run: DryRun,
    },
    /// Deletes a load balancer; with `--wait`, follows it until it is deleted.
    Delete(DeleteCommand<LoadBalancer>),
}

tracked! {
    LoadBalancer in LoadBalancersClient: "load balancer", progress progress;
    get(GetLoadBalancerRequest), delete(DeleteLoadBalancerRequest) { load_balancer_id };
    list(ListLoadBalancersRequest) -> ListLoadBalancersResponse { "loadBalancers" };
    create(CreateLoadBalancerRequest) pool "The provider pool", name "Its name",
        key "The idempotency key (defaults to the name: running the command again is a retry)";
    help "LOAD_BALANCER_ID" "The load balancer", pool "Only those of this pool",
        deleted "Also list deleted ones", follow "it";
}

/// The line `--wait` prints: the state, the address once there is one, and the message.
fn progress(json: &Value) -> String {
    let line = format!("{} {} {}", field(json, "state"), field(json, "address"), field(json, "message"));
    line.trim_end().to_owned()
}

/// Splits `head,key=value,flag` into the head and its options.
fn options(text: &str) -> (&str, Vec<(&str, &str)>) {
    let mut parts = text.split(',');
    let head = parts.next().unwrap_or_default();
    (head, parts.map(|p| p.split_once('=').unwrap_or((p, ""))).collect())
}

fn number(what: &str, text: &str) -> Result<i32, String> {
    text.parse().map_err(|_| format!("{what} {text:?} is not a number"))
}

/// Parses `entry:port:target:port[,cert=pcert_...][,passthrough]`.
pub fn parse_forward(text: &str) -> Result<LoadBalancerForwardingRule, String> {
    let (head, opts) = options(text);
    let fields: Vec<&str> = head.split(':').collect();
    let [entry, entry_port, target, target_port] = fields[..] else {
        return Err(format!("--forward {text:?}: expected entry:port:target:port, as http:80:http:8080"));
    };
    let mut rule = LoadBalancerForwardingRule {
        entry_protocol: entry.to_owned(),
        entry_port: number("the entry port", entry_port)?,
        target_protocol: target.to_owned(),
        target_port: number("the target port", target_port)?,
        ..Default::default()
    };
    for (key, value) in opts {
        match key {
            "cert" => rule.certificate_id = value.to_owned(),
            "passthrough" => rule.tls_passthrough = true,
            other => return Err(format!("--forward {text:?}: unknown option {other:?} (cert=..., passthrough)")),
        }
    }
    Ok(rule)
}

/// Parses `protocol:port[/path][,interval=S][,timeout=S][,healthy=N][,unhealthy=N]`.
pub fn parse_health_check(text: &str) -> Result<LoadBalancerHealthCheck, String> {
    let (head, opts) = options(text);
    let (protocol, rest) =
        head.split_once(':').ok_or_else(|| format!("--health-check {text:?}: expected protocol:port"))?;
    let (port, path) = rest.split_once('/').map_or((rest, String::new()), |(port, path)| (port, format!("/{path}")));
    let mut check = LoadBalancerHealthCheck {
        protocol: protocol.to_owned(),
        port: number("the health check's port", port)?,
        path,
        ..Default::default()
    };
    for (key, value) in opts {
        match key {
            "interval" => check.interval_seconds = number(key, value)?,
            "timeout" => check.timeout_seconds = number(key, value)?,
            "healthy" => check.healthy_threshold = number(key, value)?,
            "unhealthy" => check.unhealthy_threshold = number(key, value)?,
            other => return Err(format!("--health-check {text:?}: unknown option {other:?}")),
        }
    }
    Ok(check)
}

fn parse_sticky(text: &str) -> Result<LoadBalancerStickySessions, String> {
    let (cookie, ttl) =
        text.split_once(':').ok_or_else(|| format!("--sticky {text:?}: expected cookie:ttl-seconds"))?;
    Ok(LoadBalancerStickySessions { cookie_name: cookie.to_owned(), ttl_seconds: number("the cookie's ttl", ttl)? })
}

fn parse_domain(text: &str) -> Result<LoadBalancerDomain, String> {
    let (name, opts) = options(text);
    let mut domain = LoadBalancerDomain { name: name.to_owned(), ..Default::default() };
    for (key, value) in opts {
        match key {
            "cert" => domain.certificate_id = value.to_owned(),
            other => return Err(format!("--domain {text:?}: unknown option {other:?} (cert=...)")),
        }
    }
    Ok(domain)
}

impl Parts {
    /// The request parts the flags name, as an update carries them (a create copies them), and
    /// without the deprecated flags.
    fn parse(&self) -> Result<UpdateLoadBalancerRequest, String> {
        let targeted = self.pool_targets || !self.instances.is_empty() || !self.target_load_balancers.is_empty();
        Ok(UpdateLoadBalancerRequest {
            targets: targeted.then(|| LoadBalancerTargets {
                pool: self.pool_targets.then_some(true),
                instance_ids: self.instances.clone(),
                load_balancer_ids: self.target_load_balancers.clone(),
            }),
            forwarding: self.forwarding.iter().map(|f| parse_forward(f)).collect::<Result<_, _>>()?,
            health_check: self.health_check.as_deref().map(parse_health_check).transpose()?,
            sticky_sessions: self.sticky.as_deref().map(parse_sticky).transpose()?,
            source_ranges: (!self.allow.is_empty() || !self.deny.is_empty())
                .then(|| LoadBalancerSourceRanges { allow: self.allow.clone(), deny: self.deny.clone() }),
            domains: self.domains.iter().map(|d| parse_domain(d)).collect::<Result<_, _>>()?,
            ..Default::default()
        })
    }
}

/// The update mask of an update with these parts: each part a flag gave, by proto name, and
/// those `clear_sticky_sessions` and `set_domains` name without a value (sticky sessions off;
/// the domains replaced, with none when no `--domain` is given).
fn update_mask(parts: &UpdateLoadBalancerRequest, clear_sticky_sessions: bool, set_domains: bool) -> FieldMask {
    let given = [
        ("targets", parts.targets.is_some()),
        ("forwarding", !parts.forwarding.is_empty()),
        ("health_check", parts.health_check.is_some()),
        ("sticky_sessions", parts.sticky_sessions.is_some() || clear_sticky_sessions),
        ("source_ranges", parts.source_ranges.is_some()),
        ("redirect_http_to_https", parts.redirect_http_to_https.is_some()),
        ("domains", !parts.domains.is_empty() || set_domains),
    ];
    let paths = given.into_iter().filter(|(_, named)| *named).map(|(part, _)| part.to_owned()).collect();
    FieldMask { paths }
}

/// Runs a load balancer command.
pub async fn run(cli: &Cli, command: &LoadBalancersCommand) -> Result<(), String> {
    let mut client = LoadBalancersClient::new(connect(cli).await?);
    match command {
        LoadBalancersCommand::List(list) => list.run(cli, &mut client).await,
        LoadBalancersCommand::Get(get) => get.run(cli, &mut client).await,
        LoadBalancersCommand::Delete(delete) => delete.run(cli, &mut client).await,
        LoadBalancersCommand::Create(create) => {
            let spec = &create.spec;
            let parts = spec.parts.parse()?;
            let request = CreateLoadBalancerRequest {
                tenant_id: create.tenant.clone(),
                project_id: spec.project.clone(),
                pool_id: create.pool.clone(),
                name: create.name.clone(),
                description: spec.description.clone(),
                scope: spec.scope.clone(),
                region: spec.region.clone(),
                subnet_id: spec.subnet.clone(),
                targets: Some(parts.targets.unwrap_or_default()),
                forwarding: parts.forwarding,
                health_check: parts.health_check,
                sticky_sessions: parts.sticky_sessions,
                source_ranges: parts.source_ranges,
                redirect_http_to_https: spec.redirect_http_to_https,
                domains: parts.domains,
                idempotency_key: create.idempotency_key(),
            };
            create.run(cli, &mut client, request).await
        }
        LoadBalancersCommand::Update {
            tenant,
            load_balancer_id,
            parts,
            redirect_http_to_https,
            clear_sticky_sessions,
            set_domains,
            wait,
            dry_run,
        } => {
            let parts = UpdateLoadBalancerRequest { redirect_http_to_https: *redirect_http_to_https, ..parts.parse()? };
            // The mask says what the flags change, empty lists and parts turned off included.
            let request = UpdateLoadBalancerRequest {
                update_mask: Some(update_mask(&parts, *clear_sticky_sessions, *set_domains)),
                tenant_id: tenant.clone(),
                load_balancer_id: load_balancer_id.clone(),
                ..parts
            };
            if dry_run.dry_run {
                return plan::show(cli, &answer(client.plan(request.planned()).await)?);
            }
            let load_balancer = answer(client.update(request).await)?;
            show(cli, &client, tenant, load_balancer, wait.then_some("ready")).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_parse_into_the_api_shapes() {
        let rule = parse_forward("https:443:http:8080,cert=pcert_x").unwrap();
        assert_eq!(
            (rule.entry_port, rule.target_protocol.as_str(), rule.certificate_id.as_str()),
            (443, "http", "pcert_x")
        );
        assert!(parse_forward("https:443:https:443,passthrough").unwrap().tls_passthrough);
        assert!(parse_forward("http:80").is_err());
        let check = parse_health_check("http:8080/healthz,interval=15,unhealthy=4").unwrap();
        assert_eq!(
            (check.port, check.path.as_str(), check.interval_seconds, check.unhealthy_threshold),
            (8080, "/healthz", 15, 4)
        );
        assert_eq!(parse_sticky("LB:300").unwrap().ttl_seconds, 300);
        assert_eq!(parse_domain("example.com,cert=pcert_y").unwrap().certificate_id, "pcert_y");
    }

    #[test]
    fn an_update_masks_the_parts_its_flags_give_and_what_they_turn_off() {
        let parts = Parts { forwarding: vec!["tcp:22:tcp:2222".into()], ..Default::default() };
        let parsed = parts.parse().unwrap();
        assert_eq!(update_mask(&parsed, false, false).paths, ["forwarding"]);
        let redirect_off = UpdateLoadBalancerRequest { redirect_http_to_https: Some(false), ..parsed };
        assert_eq!(
            update_mask(&redirect_off, true, true).paths,
            ["forwarding", "sticky_sessions", "redirect_http_to_https", "domains"],
            "--clear-sticky-sessions and --set-domains name their parts without a value"
        );
        let nothing = Parts::default().parse().unwrap();
        assert!(update_mask(&nothing, false, false).paths.is_empty());
    }
}
