//! Provider adapters against the fake cloud, the fake cloud against the official schemas, and
//! real peers (kubectl, gcloud) against the fake cloud.

mod digitalocean;
mod gce;
mod gcloud;
mod gke;
mod kubectl;
mod schema;

pub use crate::harness::adapters::{LOCATION, PROJECT, cloud, digitalocean, gke, http, wait};
