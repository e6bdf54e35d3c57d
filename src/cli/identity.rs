//! `bcctl principals ...`, `bcctl api-keys ...`, `bcctl role-bindings ...` and `bcctl audit list`.

use super::follow::answer;
use super::{Cli, connect, output};
use crate::proto::platform::{
    CreateApiKeyRequest, CreatePrincipalRequest, CreateRoleBindingRequest, DeletePrincipalRequest,
    DeleteRoleBindingRequest, GetPrincipalRequest, ListApiKeysRequest, ListAuditEventsRequest, ListPrincipalsRequest,
    ListRoleBindingsRequest, RevokeApiKeyRequest, api_keys_client::ApiKeysClient, audit_client::AuditClient,
    principals_client::PrincipalsClient, role_bindings_client::RoleBindingsClient,
};

/// Principals: operators, and a tenant's users and service accounts.
#[derive(clap::Subcommand, Debug)]
pub enum PrincipalsCommand {
    /// Creates a principal: an operator without --tenant, a user or service account with one.
    Create {
        /// The tenant of a user or service account.
        #[arg(long, default_value = "")]
        tenant: String,
        /// `operator`, `user` or `service-account`.
        #[arg(long, default_value = "user")]
        kind: String,
        /// A name for people to read.
        #[arg(long)]
        name: String,
    },
    /// Shows one principal.
    Get {
        /// The principal's id.
        principal_id: String,
        /// Its tenant (none for an operator).
        #[arg(long, default_value = "")]
        tenant: String,
    },
    /// Lists a tenant's principals, or the operators without --tenant, a page at a time.
    List {
        /// The tenant.
        #[arg(long, default_value = "")]
        tenant: String,
        /// Which page.
        #[command(flatten)]
        page: PageArgs,
    },
    /// Deletes a principal; its keys stop working at once.
    Delete {
        /// The principal's id.
        principal_id: String,
        /// Its tenant (none for an operator).
        #[arg(long, default_value = "")]
        tenant: String,
    },
}

/// API keys.
#[derive(clap::Subcommand, Debug)]
pub enum ApiKeysCommand {
    /// Creates a key for a principal and prints its token, this once.
    Create {
        /// The principal.
        principal_id: String,
        /// Its tenant (none for an operator).
        #[arg(long, default_value = "")]
        tenant: String,
        /// What the key is for.
        #[arg(long, default_value = "")]
        description: String,
        /// How long the key works, in seconds.
        #[arg(long)]
        ttl_seconds: Option<i64>,
    },
    /// Lists a principal's keys (without secrets), a page at a time.
    List {
        /// The principal.
        principal_id: String,
        /// Its tenant (none for an operator).
        #[arg(long, default_value = "")]
        tenant: String,
        /// Which page.
        #[command(flatten)]
        page: PageArgs,
    },
    /// Revokes a key.
    Revoke {
        /// The key's id (`bck_...`).
        api_key_id: String,
        /// Its tenant (none for an operator's key).
        #[arg(long, default_value = "")]
        tenant: String,
    },
}

/// Role bindings.
#[derive(clap::Subcommand, Debug)]
pub enum RoleBindingsCommand {
    /// Binds a role: `platform-admin` without --tenant; `admin`, `editor`, `viewer` with one.
    Create {
        /// The principal.
        principal_id: String,
        /// The role.
        #[arg(long)]
        role: String,
        /// The tenant of the scope.
        #[arg(long, default_value = "")]
        tenant: String,
        /// `tenant` (the default with a tenant), `project` or `resource`.
        #[arg(long, default_value = "")]
        scope_type: String,
        /// The project or resource id.
        #[arg(long, default_value = "")]
        scope_id: String,
    },
    /// Lists a tenant's bindings, or the platform's without --tenant, a page at a time.
    List {
        /// The tenant.
        #[arg(long, default_value = "")]
        tenant: String,
        /// Only this principal's.
        #[arg(long, default_value = "")]
        principal: String,
        /// Which page.
        #[command(flatten)]
        page: PageArgs,
    },
    /// Removes a binding.
    Delete {
        /// The binding's id (`rb_...`).
        role_binding_id: String,
        /// The tenant of its scope.
        #[arg(long, default_value = "")]
        tenant: String,
    },
}

/// The audit trail.
#[derive(clap::Subcommand, Debug)]
pub enum AuditCommand {
    /// Lists decisions on mutations, newest first.
    List {
        /// Only this tenant's.
        #[arg(long, default_value = "")]
        tenant: String,
        /// Only this principal's.
        #[arg(long, default_value = "")]
        principal: String,
        /// Only this resource's.
        #[arg(long, default_value = "")]
        resource: String,
    },
}

/// Which page of a list to show.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct PageArgs {
    /// Items per page: 1 to 500 (100 when not given).
    #[arg(long, default_value_t = 0)]
    page_size: i32,
    /// The token a previous page ended with.
    #[arg(long, default_value = "")]
    page_token: String,
}

const PLATFORM: &str = "bettercompute.platform.v1";

fn print_one(cli: &Cli, message: &impl prost::Message, name: &str) {
    let json = output::to_json(message, &format!("{PLATFORM}.{name}"));
    output::print(cli.output, &json, std::slice::from_ref(&json));
}

fn print_list(cli: &Cli, message: &impl prost::Message, name: &str, field: &str) {
    let json = output::to_json(message, &format!("{PLATFORM}.{name}"));
    let rows = json[field].as_array().cloned().unwrap_or_default();
    output::print(cli.output, &json, &rows);
    if let Some(next) = json["nextPageToken"].as_str().filter(|next| !next.is_empty()) {
        eprintln!("more follow: pass --page-token {next}");
    }
}

/// Runs a principals command.
pub async fn principals(cli: &Cli, command: &PrincipalsCommand) -> Result<(), String> {
    let mut client = PrincipalsClient::new(connect(cli).await?);
    let one = match command {
        PrincipalsCommand::Create { tenant, kind, name } => {
            client
                .create(CreatePrincipalRequest { tenant_id: tenant.clone(), kind: kind.clone(), name: name.clone() })
                .await
        }
        PrincipalsCommand::Get { principal_id, tenant } => {
            client.get(GetPrincipalRequest { tenant_id: tenant.clone(), principal_id: principal_id.clone() }).await
        }
        PrincipalsCommand::Delete { principal_id, tenant } => {
            client
                .delete(DeletePrincipalRequest { tenant_id: tenant.clone(), principal_id: principal_id.clone() })
                .await
        }
        PrincipalsCommand::List { tenant, page } => {
            let list = answer(
                client
                    .list(ListPrincipalsRequest {
                        tenant_id: tenant.clone(),
                        include_deleted: false,
                        page_size: page.page_size,
                        page_token: page.page_token.clone(),
                    })
                    .await,
            )?;
            print_list(cli, &list, "ListPrincipalsResponse", "principals");
            return Ok(());
        }
    };
    print_one(cli, &answer(one)?, "Principal");
    Ok(())
}

/// Runs an API keys command.
pub async fn api_keys(cli: &Cli, command: &ApiKeysCommand) -> Result<(), String> {
    let mut client = ApiKeysClient::new(connect(cli).await?);
    let one = match command {
        ApiKeysCommand::Create { principal_id, tenant, description, ttl_seconds } => {
            client
                .create(CreateApiKeyRequest {
                    tenant_id: tenant.clone(),
                    principal_id: principal_id.clone(),
                    description: description.clone(),
                    ttl_seconds: *ttl_seconds,
                })
                .await
        }
        ApiKeysCommand::Revoke { api_key_id, tenant } => {
            client.revoke(RevokeApiKeyRequest { tenant_id: tenant.clone(), api_key_id: api_key_id.clone() }).await
        }
        ApiKeysCommand::List { principal_id, tenant, page } => {
            let list = answer(
                client
                    .list(ListApiKeysRequest {
                        tenant_id: tenant.clone(),
                        principal_id: principal_id.clone(),
                        page_size: page.page_size,
                        page_token: page.page_token.clone(),
                    })
                    .await,
            )?;
            print_list(cli, &list, "ListApiKeysResponse", "apiKeys");
            return Ok(());
        }
    };
    print_one(cli, &answer(one)?, "ApiKey");
    Ok(())
}

/// Runs a role bindings command.
pub async fn role_bindings(cli: &Cli, command: &RoleBindingsCommand) -> Result<(), String> {
    let mut client = RoleBindingsClient::new(connect(cli).await?);
    let one = match command {
        RoleBindingsCommand::Create { principal_id, role, tenant, scope_type, scope_id } => {
            client
                .create(CreateRoleBindingRequest {
                    tenant_id: tenant.clone(),
                    principal_id: principal_id.clone(),
                    role: role.clone(),
                    scope_type: scope_type.clone(),
                    scope_id: scope_id.clone(),
                })
                .await
        }
        RoleBindingsCommand::Delete { role_binding_id, tenant } => {
            client
                .delete(DeleteRoleBindingRequest {
                    tenant_id: tenant.clone(),
                    role_binding_id: role_binding_id.clone(),
                })
                .await
        }
        RoleBindingsCommand::List { tenant, principal, page } => {
            let list = answer(
                client
                    .list(ListRoleBindingsRequest {
                        tenant_id: tenant.clone(),
                        principal_id: principal.clone(),
                        page_size: page.page_size,
                        page_token: page.page_token.clone(),
                    })
                    .await,
            )?;
            print_list(cli, &list, "ListRoleBindingsResponse", "roleBindings");
            return Ok(());
        }
    };
    print_one(cli, &answer(one)?, "RoleBinding");
    Ok(())
}

/// Runs an audit command.
pub async fn audit(cli: &Cli, command: &AuditCommand) -> Result<(), String> {
    let mut client = AuditClient::new(connect(cli).await?);
    let AuditCommand::List { tenant, principal, resource } = command;
    let list = client
        .list(ListAuditEventsRequest {
            tenant_id: tenant.clone(),
            principal_id: principal.clone(),
            resource_id: resource.clone(),
            ..Default::default()
        })
        .await;
    let list = answer(list)?;
    print_list(cli, &list, "ListAuditEventsResponse", "auditEvents");
    Ok(())
}
