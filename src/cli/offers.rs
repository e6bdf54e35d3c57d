//! `bcctl offers ...`.

use super::follow::answer;
use super::{Cli, complete, connect, output};
use crate::proto::platform::{
    CreateOfferRequest, DeleteOfferRequest, GetOfferRequest, ListOffersRequest, UpdateOfferRequest,
    offers_client::OffersClient,
};

/// Which offer: its pool and tenant.
#[derive(clap::Args, Debug)]
pub struct OfferKey {
    /// The pool.
    #[arg(long, add = complete::pools())]
    pool: String,
    /// The tenant.
    #[arg(long)]
    tenant: String,
}

/// The offer commands.
#[derive(clap::Subcommand, Debug)]
pub enum OffersCommand {
    /// Offers a platform pool to a tenant.
    Create {
        #[command(flatten)]
        key: OfferKey,
        /// `active` (the default) or `suspended`.
        #[arg(long, default_value = "")]
        state: String,
        /// A region the tenant may make nothing in; repeat for several.
        #[arg(long = "exclude-region")]
        excluded_regions: Vec<String>,
    },
    /// Shows the offer of a pool to a tenant.
    Get(OfferKey),
    /// Lists offers, oldest first.
    List {
        /// Only offers of this pool.
        #[arg(long, default_value = "", add = complete::pools())]
        pool: String,
        /// Only offers to this tenant.
        #[arg(long, default_value = "")]
        tenant: String,
    },
    /// Suspends or resumes an offer, or changes its excluded regions.
    Update {
        #[command(flatten)]
        key: OfferKey,
        /// `active` or `suspended`.
        #[arg(long)]
        state: Option<String>,
        /// The new excluded regions, replacing the old ones; repeat for several.
        #[arg(long = "exclude-region")]
        excluded_regions: Vec<String>,
        /// Empties the excluded regions.
        #[arg(long)]
        clear_excluded_regions: bool,
    },
    /// Withdraws an offer.
    Delete(OfferKey),
}

/// Runs an offer command.
pub async fn run(cli: &Cli, command: &OffersCommand) -> Result<(), String> {
    let mut client = OffersClient::new(connect(cli).await?);
    let offer = match command {
        OffersCommand::Create { key, state, excluded_regions } => {
            client
                .create(CreateOfferRequest {
                    pool_id: key.pool.clone(),
                    tenant_id: key.tenant.clone(),
                    state: state.clone(),
                    excluded_regions: excluded_regions.clone(),
                })
                .await
        }
        OffersCommand::Get(key) => {
            client.get(GetOfferRequest { pool_id: key.pool.clone(), tenant_id: key.tenant.clone() }).await
        }
        OffersCommand::Update { key, state, excluded_regions, clear_excluded_regions } => {
            // The mask says what changes, so that an empty list of regions clears them.
            let mut paths = Vec::new();
            if state.is_some() {
                paths.push("state".to_owned());
            }
            if !excluded_regions.is_empty() || *clear_excluded_regions {
                paths.push("excluded_regions".to_owned());
            }
            client
                .update(UpdateOfferRequest {
                    update_mask: Some(prost_types::FieldMask { paths }),
                    pool_id: key.pool.clone(),
                    tenant_id: key.tenant.clone(),
                    state: state.clone(),
                    excluded_regions: excluded_regions.clone(),
                    clear_excluded_regions: false,
                })
                .await
        }
        OffersCommand::Delete(key) => {
            client.delete(DeleteOfferRequest { pool_id: key.pool.clone(), tenant_id: key.tenant.clone() }).await
        }
        OffersCommand::List { pool, tenant } => {
            let request = ListOffersRequest { pool_id: pool.clone(), tenant_id: tenant.clone() };
            let list = answer(client.list(request).await)?;
            return output::print_list(cli.output, &list, "bettercompute.platform.v1.ListOffersResponse", "offers");
        }
    };
    output::print_one(cli.output, &answer(offer)?, "bettercompute.platform.v1.Offer")
}
