//! The commands every asynchronous resource has alike, written once for any kind: `list`, `get`,
//! `delete` (with `--wait`, and `--dry-run` that prints its plan), the flags a create starts and
//! ends with, and the `--wait` of its create and update ([`show`]). A kind is its message with an
//! `impl` of [`Tracked`]: its client, its four requests and the words of its help, which
//! [`tracked!`] writes from a table. A kind's file keeps its own commands (update and the rest),
//! its create's own flags and their help; its enum names these shared ones:
//!
//! ```text
//! /// Shows one network with its subnets.
//! Get(GetCommand<Network>),
//! ```

use std::future::Future;
use std::marker::PhantomData;

use prost::Message;
use serde_json::Value;

use super::follow::{Followed, field};
use super::plan::{self, DryRun};
use super::{Cli, output};
use super::{complete, failure};

/// The words a kind's shared commands have in their help, without the final period that clap
/// drops from a one-line doc comment (so that they read as the kind's own commands' do).
pub struct Help {
    /// The id argument's name (`NETWORK_ID`) and help (`The network`).
    pub id: (&'static str, &'static str),
    /// `list --pool` (`Only networks of this pool`); empty where `list` is the kind's own.
    pub pool: &'static str,
    /// `list --include-deleted` (`Also list deleted networks`).
    pub include_deleted: &'static str,
    /// `delete --wait` (`Follow the network until it is deleted`).
    pub wait_deleted: &'static str,
    /// `create --pool` (`The provider pool`).
    pub create_pool: &'static str,
    /// `create --name` (`The network's name`).
    pub create_name: &'static str,
    /// `create --idempotency-key` (`The idempotency key (defaults to the name)`).
    pub idempotency_key: &'static str,
    /// `create --wait` (`Follow the network until it is ready`).
    pub wait_ready: &'static str,
}

/// One kind of asynchronous resource, implemented on its message.
pub trait Tracked: Message + Sized + 'static {
    /// Its service's client.
    type Client: Clone;
    /// Its create request.
    type Create;
    /// Its list response.
    type List: Message;
    /// How `--wait` follows it.
    const FOLLOWED: Followed;
    /// The full name of its list response and the field of the items.
    const LIST: (&'static str, &'static str);
    /// The words of the shared commands' help.
    const HELP: Help;

    /// Its service's client on `channel`.
    fn client(channel: super::AuthedChannel) -> Self::Client;

    /// The resource `id` of `tenant_id`.
    fn get(client: &mut Self::Client, tenant_id: String, id: String) -> impl Future<Output = Result<Self, String>>;

    /// Asks for the creation of a resource; answers it as it is now, or the call's failure (which
    /// [`CreateCommand::run`] words).
    fn create(client: &mut Self::Client, request: Self::Create) -> impl Future<Output = Result<Self, tonic::Status>>;

    /// Asks for the deletion of the resource `id` (`force`d: ended at once, leaving orphans);
    /// answers it as it is now.
    fn delete(
        client: &mut Self::Client,
        tenant_id: String,
        id: String,
        force: bool,
    ) -> impl Future<Output = Result<Self, String>>;

    /// What the deletion of the resource `id` would do, changing nothing.
    fn plan_delete(
        client: &mut Self::Client,
        tenant_id: String,
        id: String,
    ) -> impl Future<Output = Result<crate::proto::compute::Plan, String>>;

    /// The tenant's resources, of the pool `pool_id` when it is not empty.
    fn list(
        client: &mut Self::Client,
        tenant_id: String,
        pool_id: String,
        include_deleted: bool,
    ) -> impl Future<Output = Result<Self::List, String>>;
}

/// `list`: the tenant's resources of a kind.
#[derive(clap::Args, Debug)]
pub struct ListCommand<K: Tracked> {
    /// The tenant.
    #[arg(long)]
    tenant: String,
    #[arg(long, default_value = "", help = K::HELP.pool, add = complete::pools())]
    pool: String,
    #[arg(long, help = K::HELP.include_deleted)]
    include_deleted: bool,
    #[arg(skip)]
    kind: PhantomData<K>,
}

/// `get`: one resource; `--wait` follows it until it is ready (or the state given).
#[derive(clap::Args, Debug)]
pub struct GetCommand<K: Tracked> {
    /// The tenant.
    #[arg(long)]
    tenant: String,
    #[arg(value_name = K::HELP.id.0, help = K::HELP.id.1, add = complete::ids::<K>())]
    id: String,
    /// Follow it until it is ready, or until the state given (`--wait=deleted`).
    #[arg(long, value_name = "STATE", num_args = 0..=1, require_equals = true, default_missing_value = "ready")]
    wait: Option<String>,
    #[arg(skip)]
    kind: PhantomData<K>,
}

/// `delete`: asks for a resource's deletion; `--wait` follows it until it is deleted,
/// `--dry-run` shows its plan instead.
#[derive(clap::Args, Debug)]
pub struct DeleteCommand<K: Tracked> {
    /// The tenant.
    #[arg(long)]
    tenant: String,
    #[arg(value_name = K::HELP.id.0, help = K::HELP.id.1, add = complete::ids::<K>())]
    id: String,
    #[arg(long, help = K::HELP.wait_deleted, conflicts_with = "dry_run")]
    wait: bool,
    /// End a resource stuck deleting (or whose provider account cannot be reached) at once,
    /// recording what it may leave at the provider as orphans (`bcctl orphans list`); an admin's
    #[arg(long, conflicts_with = "dry_run")]
    force: bool,
    #[command(flatten)]
    dry_run: DryRun,
    #[arg(skip)]
    kind: PhantomData<K>,
}

/// `create`: the flags every kind's create has, around `S`, the kind's own (flattened between
/// the name and the idempotency key, where they stand in the help).
#[derive(clap::Args, Debug)]
pub struct CreateCommand<K: Tracked, S: clap::Args> {
    /// The tenant.
    #[arg(long)]
    pub tenant: String,
    #[arg(long, help = K::HELP.create_pool, add = complete::pools())]
    pub pool: String,
    #[arg(long, help = K::HELP.create_name)]
    pub name: String,
    #[command(flatten)]
    pub spec: S,
    #[arg(long, help = K::HELP.idempotency_key)]
    idempotency_key: Option<String>,
    #[arg(long, help = K::HELP.wait_ready)]
    wait: bool,
    #[arg(skip)]
    kind: PhantomData<K>,
}

impl<K: Tracked, S: clap::Args> CreateCommand<K, S> {
    /// The idempotency key given, else the name: running the command again is a retry.
    pub fn idempotency_key(&self) -> String {
        self.idempotency_key.clone().unwrap_or_else(|| self.name.clone())
    }

    /// Sends `request` (made from these flags) and prints the new resource, once ready with
    /// `--wait`.
    pub async fn run(&self, cli: &Cli, client: &mut K::Client, request: K::Create) -> Result<(), String> {
        let resource = match K::create(client, request).await {
            Ok(resource) => resource,
            Err(status) => return Err(self.refusal(client, &status).await),
        };
        show(cli, client, &self.tenant, resource, self.wait.then_some("ready")).await
    }

    /// The refusal of this create as `bcctl` words it: a name taken, when the key was the name.
    async fn refusal(&self, client: &mut K::Client, status: &tonic::Status) -> String {
        let error = bcd::api_error::ApiError::from_status(status);
        let existing = match failure::conflicting_id(&error) {
            Some(id) => K::get(client, self.tenant.clone(), id.clone())
                .await
                .ok()
                .map(|found| (id, field(&output::to_json(&found, K::FOLLOWED.message), "state").to_owned())),
            None => None,
        };
        let existing = existing.as_ref().map(|(id, state)| (id.as_str(), state.as_str()));
        failure::create_refused(&error, K::FOLLOWED.what, &self.name, self.idempotency_key.is_some(), existing)
    }
}

impl<K: Tracked> ListCommand<K> {
    /// Prints the list.
    pub async fn run(&self, cli: &Cli, client: &mut K::Client) -> Result<(), String> {
        let list = K::list(client, self.tenant.clone(), self.pool.clone(), self.include_deleted).await?;
        print_list::<K>(cli, &list)
    }
}

impl<K: Tracked> GetCommand<K> {
    /// Prints the resource, once it is in the state `--wait` names.
    pub async fn run(&self, cli: &Cli, client: &mut K::Client) -> Result<(), String> {
        let resource = K::get(client, self.tenant.clone(), self.id.clone()).await?;
        show(cli, client, &self.tenant, resource, self.wait.as_deref()).await
    }
}

impl<K: Tracked> DeleteCommand<K> {
    /// Prints the resource as the deletion left it, or once deleted with `--wait`; with
    /// `--dry-run`, the deletion's plan.
    pub async fn run(&self, cli: &Cli, client: &mut K::Client) -> Result<(), String> {
        if self.dry_run.dry_run {
            return plan::show(cli, &K::plan_delete(client, self.tenant.clone(), self.id.clone()).await?);
        }
        let resource = K::delete(client, self.tenant.clone(), self.id.clone(), self.force).await?;
        show(cli, client, &self.tenant, resource, self.wait.then_some("deleted")).await
    }
}

/// Prints a list response of kind `K`.
pub fn print_list<K: Tracked>(cli: &Cli, list: &K::List) -> Result<(), String> {
    let (message, items) = K::LIST;
    output::print_list(cli.output, list, message, items)
}

/// Prints `resource` of `tenant`, after following it until it is `until` when asked.
pub async fn show<K: Tracked>(
    cli: &Cli,
    client: &K::Client,
    tenant: &str,
    resource: K,
    until: Option<&str>,
) -> Result<(), String> {
    let json = output::to_json(&resource, K::FOLLOWED.message);
    let json = match until {
        Some(until) => follow::<K>(client, tenant, field(&json, "id"), until).await?,
        None => json,
    };
    output::print(cli.output, &json, std::slice::from_ref(&json));
    Ok(())
}

/// Follows the resource `id` of `tenant` until it is `until` (see [`Followed::wait_for`]).
pub async fn follow<K: Tracked>(client: &K::Client, tenant: &str, id: &str, until: &str) -> Result<Value, String> {
    K::FOLLOWED
        .wait_for(id, until, || {
            let mut client = client.clone();
            async move { K::get(&mut client, tenant.to_owned(), id.to_owned()).await }
        })
        .await
}

/// Implements [`Tracked`] for a `compute.v1` message from a table:
///
/// ```text
/// tracked! {
///     Network in NetworksClient: "network", progress state_and_message;
///     get(GetNetworkRequest), delete(DeleteNetworkRequest) { network_id };
///     list(ListNetworksRequest) -> ListNetworksResponse { "networks" };
///     create(CreateNetworkRequest) pool "The provider pool", name "The network's name",
///         key "The idempotency key (defaults to the name)";
///     help "NETWORK_ID" "The network", pool "Only networks of this pool",
///         deleted "Also list deleted networks", follow "the network";
/// }
/// ```
///
/// The get and delete requests carry `tenant_id` and the id field named in braces; the list
/// request `tenant_id`, `pool_id` and `include_deleted`; the create's `pool`, `name` and `key`
/// are the help of its shared flags. A list marked `paged(items)` after its braces takes page
/// tokens, and `list` follows it to its last page. Without `pool` in `help`, the kind's `list` is its own
/// command. `follow` names the resource in the help of `--wait` (`Follow the network
/// until it is ready`). The help strings have no final period, as clap shows a one-line doc
/// comment.
macro_rules! tracked {
    (
        $resource:ident in $client:ident: $what:literal, progress $progress:expr;
        get($get:ident), delete($delete:ident) { $id:ident };
        list($list:ident) -> $listed:ident { $items:literal } $(paged($paged:ident))?;
        create($create:ident) pool $create_pool:literal, name $create_name:literal, key $key:literal;
        help $id_name:literal $id_help:literal, $(pool $pool:literal,)?
            deleted $deleted:literal, follow $it:literal;
    ) => {
        impl $crate::cli::tracked::Tracked for $resource {
            type Client = $client<$crate::cli::AuthedChannel>;
            type Create = $create;
            type List = $listed;
            const FOLLOWED: $crate::cli::follow::Followed = $crate::cli::follow::Followed {
                what: $what,
                message: concat!("bettercompute.compute.v1.", stringify!($resource)),
                progress: $progress,
            };
            const LIST: (&'static str, &'static str) = (concat!("bettercompute.compute.v1.", stringify!($listed)), $items);
            const HELP: $crate::cli::tracked::Help = $crate::cli::tracked::Help {
                id: ($id_name, $id_help),
                pool: $crate::cli::tracked::tracked!(@pool $($pool)?),
                include_deleted: $deleted,
                wait_deleted: concat!("Follow ", $it, " until it is deleted"),
                create_pool: $create_pool,
                create_name: $create_name,
                idempotency_key: $key,
                wait_ready: concat!("Follow ", $it, " until it is ready"),
            };

            fn client(channel: $crate::cli::AuthedChannel) -> Self::Client {
                $client::new(channel)
            }

            async fn get(client: &mut Self::Client, tenant_id: String, $id: String) -> Result<Self, String> {
                $crate::cli::follow::answer(client.get($get { tenant_id, $id }).await)
            }

            async fn create(client: &mut Self::Client, request: $create) -> Result<Self, tonic::Status> {
                client.create(request).await.map(tonic::Response::into_inner)
            }

            async fn delete(
                client: &mut Self::Client,
                tenant_id: String,
                $id: String,
                force: bool,
            ) -> Result<Self, String> {
                $crate::cli::follow::answer(client.delete($delete { tenant_id, $id, validate_only: false, force }).await)
            }

            async fn plan_delete(
                client: &mut Self::Client,
                tenant_id: String,
                $id: String,
            ) -> Result<$crate::proto::compute::Plan, String> {
                use $crate::cli::plan::Change;
                let request = $delete { tenant_id, $id, validate_only: false, force: false };
                $crate::cli::follow::answer(client.plan(request.planned()).await)
            }

            async fn list(
                client: &mut Self::Client,
                tenant_id: String,
                pool_id: String,
                include_deleted: bool,
            ) -> Result<$listed, String> {
                let request = $list { tenant_id, pool_id, include_deleted, ..Default::default() };
                $crate::cli::tracked::tracked!(@list client, request $(, $paged)?)
            }
        }
    };
    (@list $client:ident, $request:ident) => {
        $crate::cli::follow::answer($client.list($request).await)
    };
    // A paged list is followed to its last page, so that the command shows every item.
    (@list $client:ident, $request:ident, $paged:ident) => {{
        let mut request = $request;
        let mut whole = $crate::cli::follow::answer($client.list(request.clone()).await)?;
        while !whole.next_page_token.is_empty() {
            request.page_token = std::mem::take(&mut whole.next_page_token);
            let mut page = $crate::cli::follow::answer($client.list(request.clone()).await)?;
            whole.$paged.append(&mut page.$paged);
            whole.next_page_token = page.next_page_token;
        }
        Ok(whole)
    }};
    (@pool $pool:literal) => {
        $pool
    };
    (@pool) => {
        ""
    };
}

pub(crate) use tracked;
