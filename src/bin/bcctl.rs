//! `bcctl`: the command-line client, and `bcctl dev`.

use better_compute::cli::{self, Cli, Command};
use better_compute::{dev, telemetry};
use clap::CommandFactory;

fn main() {
    // A shell completing a word runs `bcctl` with `COMPLETE` set (see `bcctl completion`): that
    // answers here and exits, before anything else can write to standard output.
    clap_complete::CompleteEnv::with_factory(Cli::command).complete();
    better_compute::process::run(|cli: Cli| async move {
        match cli.command {
            Command::Dev { options, log } => {
                telemetry::init_logging(log.log_format);
                dev::run(options).await.map_err(|error| error.to_string())
            }
            Command::Fakecloud { port } => run_fakecloud(port).await,
            _ => cli::run(cli).await,
        }
    })
}

/// `bcctl fakecloud`: serves the fake cloud until Ctrl-C or SIGTERM.
async fn run_fakecloud(port: u16) -> Result<(), String> {
    let config = fakecloud::FakeCloudConfig { port, ..Default::default() };
    let digitalocean_token = config.digitalocean_token.clone();
    let cloud = fakecloud::FakeCloud::start(config)
        .await
        .map_err(|error| format!("cannot start the fake cloud on 127.0.0.1:{port}: {error}"))?;
    print!("{}", fakecloud_banner(cloud.base_url(), &digitalocean_token));
    better_compute::shutdown::signal().await;
    Ok(())
}

/// What `bcctl fakecloud` prints: where it serves, and the credentials it accepts with the
/// commands that record them as provider accounts (its accounts live nowhere else).
fn fakecloud_banner(base: &str, digitalocean_token: &str) -> String {
    format!(
        "the fake cloud is serving on {base} (GKE, DigitalOcean, OAuth token endpoint {base}/token)\n\
         \n\
         GKE accepts the service-account keys its token endpoint hands out; fetch one (any project and name):\n\
         \x20 curl -s '{base}/_fake/service-account-key?project=my-project&name=reconciler' > gke-key.json\n\
         \x20 bcctl accounts create --provider gke --name gke --credentials-file gke-key.json \\\n\
         \x20   --provider-endpoint {base} --zone us-central1-a --zone us-central1-b\n\
         \n\
         DigitalOcean accepts the token {digitalocean_token}:\n\
         \x20 echo {digitalocean_token} > do-token\n\
         \x20 bcctl accounts create --provider digitalocean --name do --credentials-file do-token \\\n\
         \x20   --provider-endpoint {base} --region nyc3 --region ams3\n"
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_fakecloud_banner_names_both_credentials() {
        let banner = super::fakecloud_banner("http://127.0.0.1:8090", "fake-token");
        assert!(banner.contains("http://127.0.0.1:8090/_fake/service-account-key?"), "{banner}");
        assert!(banner.contains("DigitalOcean accepts the token fake-token"), "{banner}");
    }
}
