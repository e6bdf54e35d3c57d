//! The platform catalog: CRUD of projects, accounts, pools, offers, quotas and budgets through
//! JSON; the tenant's pools and every error of the placement checks through
//! `POST /api/compute/pools/checkPlacement`; quota booking under concurrency; credentials that
//! never reach a response, an event or a log line; and `bcctl dev`'s demo catalog.

mod checks;
mod credentials;
mod crud;
mod dev_seed;
mod masks;
mod quotas;
