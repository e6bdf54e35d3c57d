//! The health check DigitalOcean gives a load balancer sent none, and the value of each setting
//! a health check is sent without, as its API reference documents them
//! (`resources/load_balancers/models/health_check.yml`): `http` on port 80, path `/`, every 10
//! seconds, failing after 5, 3 passes to be in and 5 failures to be out. The path applies to
//! `http` and `https` checks only. The store fills a tenant's check from it and the provider
//! adapter sends it, so that what the answers show and what the provider is sent never differ.

/// A load balancer's health check settings when nothing says otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HealthCheckDefaults {
    /// `http`, `https` or `tcp`.
    pub protocol: &'static str,
    /// The port checked on each target.
    pub port: u16,
    /// The path an `http` or `https` check requests.
    pub path: &'static str,
    /// Seconds between two checks.
    pub interval_seconds: u32,
    /// Seconds a check may take.
    pub timeout_seconds: u32,
    /// Passes in a row that bring a target in.
    pub healthy_threshold: u32,
    /// Failures in a row that take a target out.
    pub unhealthy_threshold: u32,
}

/// DigitalOcean's defaults.
pub const DEFAULTS: HealthCheckDefaults = HealthCheckDefaults {
    protocol: "http",
    port: 80,
    path: "/",
    interval_seconds: 10,
    timeout_seconds: 5,
    healthy_threshold: 3,
    unhealthy_threshold: 5,
};
