//! Which addresses the worker may sign in to as a BMC. A tenant admin names the BMC's address,
//! and the worker then sends that admin's username and password there and records what comes
//! back: an address on loopback, link-local (the clouds' metadata service), an unspecified,
//! multicast or reserved address, or an address of the control plane's own hosts would turn the
//! worker into the tenant's client of services only the control plane should reach. Those are
//! refused unless the pool's policy (`policy.metal.bmcAllowedNetworks`, set by an operator)
//! allows a network holding the address.
//!
//! A hostname is resolved and every address it resolves to is checked; the driver then
//! connects to the checked addresses, never resolving again, so a name that resolves elsewhere
//! a moment later (DNS rebinding) reaches nothing unchecked. IPv4 addresses written as IPv6
//! (`::ffff:127.0.0.1`, `::127.0.0.1`, `64:ff9b::7f00:1`) are judged as the IPv4 address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::time::Duration;

pub use crate::domain::cidr::Network;
use crate::domain::cidr::embedded_ipv4;

/// The policy key an operator allows networks with.
pub const POLICY_KEY: &str = "policy.metal.bmcAllowedNetworks";

/// How long a BMC's hostname may take to resolve.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// What kind of address the worker may not reach by default, or `None` for one it may.
fn refused_kind(address: IpAddr) -> Option<&'static str> {
    if let Some(v4) = embedded_ipv4(address) {
        return refused_kind(IpAddr::V4(v4));
    }
    match address {
        IpAddr::V4(v4) => {
            let first = v4.octets()[0];
            if v4.is_loopback() {
                Some("loopback addresses")
            } else if v4.is_link_local() {
                Some("link-local addresses (cloud metadata)")
            } else if first == 0 {
                Some("unspecified addresses")
            } else if v4.is_multicast() {
                Some("multicast addresses")
            } else if v4.is_broadcast() || first >= 240 {
                Some("broadcast and reserved addresses")
            } else {
                None
            }
        }
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            if v6.is_loopback() {
                Some("loopback addresses")
            } else if v6.is_unspecified() {
                Some("unspecified addresses")
            } else if first & 0xffc0 == 0xfe80 {
                Some("link-local addresses")
            } else if v6.is_multicast() {
                Some("multicast addresses")
            } else {
                None
            }
        }
    }
}

/// Whether `address` is one of this host's own: a socket routed to it starts from it, which
/// only an address of a local interface does. Nothing is sent.
fn is_this_hosts(address: IpAddr) -> bool {
    let unspecified: IpAddr = match address {
        IpAddr::V4(_) => Ipv4Addr::UNSPECIFIED.into(),
        IpAddr::V6(_) => Ipv6Addr::UNSPECIFIED.into(),
    };
    let Ok(socket) = UdpSocket::bind(SocketAddr::new(unspecified, 0)) else { return false };
    socket.connect(SocketAddr::new(address, 9)).is_ok() && socket.local_addr().is_ok_and(|local| local.ip() == address)
}

/// Why the worker may not connect to `address`, or `None` when it may: allowed by one of
/// `allowed` (the pool's policy), or neither of a refused kind, one of this host's addresses,
/// nor one of `own` (the control plane's listeners as the worker knows them).
pub fn refusal(address: IpAddr, allowed: &[Network], own: &[IpAddr]) -> Option<String> {
    if allowed.iter().any(|network| network.contains(address)) {
        return None;
    }
    let kind = match refused_kind(address) {
        Some(kind) => kind,
        None if own.contains(&address) || is_this_hosts(address) => "the control plane's own addresses",
        None => return None,
    };
    // Short enough for a field violation's description (200 bytes) with an IPv6 address.
    Some(format!(
        "resolves to {address}: {kind} are refused unless an operator allows the network in the pool's {POLICY_KEY}"
    ))
}

/// The host and port an address of `driver` (`redfish`: a URL; `ipmi`: `host[:port]`) names;
/// `None` when it names none (the driver's own check says why).
fn host_and_port(driver: &str, address: &str) -> Option<(String, u16)> {
    let address = address.trim();
    if driver == "ipmi" {
        let (host, port) = match address.strip_prefix('[') {
            Some(rest) => {
                let (host, after) = rest.split_once(']')?;
                (host, after.strip_prefix(':'))
            }
            None if address.matches(':').count() == 1 => {
                let (host, port) = address.split_once(':')?;
                (host, Some(port))
            }
            None => (address, None),
        };
        let port = match port {
            Some(port) => port.parse().ok()?,
            None => 623,
        };
        return (!host.is_empty()).then(|| (host.to_owned(), port));
    }
    let url = reqwest::Url::parse(address).ok()?;
    let port = url.port_or_known_default()?;
    // The URL parser has read every IPv4 spelling (`2130706433`, `0x7f.1`) as dotted quads.
    let host = url.host_str()?.trim_start_matches('[').trim_end_matches(']');
    Some((host.to_owned(), port))
}

/// What checking an address found.
#[derive(Debug)]
pub enum Checked {
    /// Every address the host resolves to may be reached: connect to these.
    Allowed(Vec<SocketAddr>),
    /// One of them may not: why, to tell the user.
    Refused(String),
    /// The host did not resolve (nothing to connect to, nothing refused yet).
    Unresolved(String),
    /// The address names no host (the driver's own check says why).
    Malformed,
}

/// Resolves the host of `address` (an address of `driver`) and checks every address it
/// resolves to against `allowed` and `own`.
pub async fn check(driver: &str, address: &str, allowed: &[Network], own: &[IpAddr]) -> Checked {
    let Some((host, port)) = host_and_port(driver, address) else { return Checked::Malformed };
    let resolved: Vec<SocketAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => match tokio::time::timeout(RESOLVE_TIMEOUT, tokio::net::lookup_host((host.as_str(), port))).await {
            Ok(Ok(addresses)) => addresses.collect(),
            Ok(Err(error)) => return Checked::Unresolved(format!("the BMC's host does not resolve ({error})")),
            Err(_) => return Checked::Unresolved("the BMC's host did not resolve in time".to_owned()),
        },
    };
    if resolved.is_empty() {
        return Checked::Unresolved("the BMC's host resolves to no address".to_owned());
    }
    for socket in &resolved {
        if let Some(why) = refusal(socket.ip(), allowed, own) {
            return Checked::Refused(why);
        }
    }
    Checked::Allowed(resolved)
}

/// The addresses `host` (a URL's host or a bare host) resolves to, for the control plane's own
/// listeners as the worker is told them; nothing when it does not resolve.
pub async fn resolve_own(url: &str) -> Vec<IpAddr> {
    let Some((host, port)) = host_and_port("redfish", url) else { return Vec::new() };
    if let Ok(ip) = host.parse::<IpAddr>() {
        return vec![ip];
    }
    match tokio::time::timeout(RESOLVE_TIMEOUT, tokio::net::lookup_host((host.as_str(), port))).await {
        Ok(Ok(addresses)) => addresses.map(|socket| socket.ip()).collect(),
        _ => Vec::new(),
    }
}

/// `text` as a view may show what a BMC said: printable characters only (control and format
/// characters dropped, runs of space folded), at most `max` characters, cut with an ellipsis.
pub fn printable(text: &str, max: usize) -> String {
    let mut kept: Vec<char> = Vec::new();
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            space = !kept.is_empty();
            continue;
        }
        if c.is_control() || is_format(c) {
            continue;
        }
        if space {
            kept.push(' ');
            space = false;
        }
        kept.push(c);
        if kept.len() > max {
            kept.truncate(max.saturating_sub(1));
            kept.push('…');
            break;
        }
    }
    kept.into_iter().collect()
}

/// Unicode format characters (bidirectional overrides, zero widths) that would make a view
/// read other than it is.
fn is_format(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{206f}' | '\u{feff}')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn loopback_link_local_and_their_ipv6_spellings_are_refused_by_default() {
        for address in [
            "127.0.0.1",
            "127.9.9.9",
            "169.254.169.254",
            "0.0.0.0",
            "0.1.2.3",
            "224.0.0.1",
            "255.255.255.255",
            "240.0.0.1",
            "::1",
            "::",
            "fe80::1",
            "febf::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
        ] {
            assert!(refusal(ip(address), &[], &[]).is_some(), "{address}");
        }
        for address in ["10.0.0.5", "192.168.1.10", "fd00::5", "2001:db8::5", "::ffff:10.0.0.5"] {
            assert!(refused_kind(ip(address)).is_none(), "{address}");
        }
        assert!(refusal(ip("10.0.0.5"), &[], &[ip("10.0.0.5")]).is_some(), "the control plane's own listener");
    }

    #[test]
    fn an_allowed_network_lets_its_addresses_through_in_every_spelling() {
        let allowed = [Network::parse("127.0.0.0/8").unwrap(), Network::parse("::1/128").unwrap()];
        for address in ["127.0.0.1", "::ffff:127.0.0.1", "::1", "127.0.0.2"] {
            assert_eq!(refusal(ip(address), &allowed, &[]), None, "{address}");
        }
        assert!(refusal(ip("169.254.169.254"), &allowed, &[]).is_some());
    }

    #[test]
    fn networks_parse_strictly() {
        assert_eq!(Network::parse("10.0.0.0/8").unwrap().to_string(), "10.0.0.0/8");
        assert_eq!(Network::parse("fe80::/10").unwrap().to_string(), "fe80::/10");
        assert_eq!(Network::parse("0.0.0.0/0").unwrap().to_string(), "0.0.0.0/0");
        for bad in
            ["10.0.0.5", "10.0.0.5/24", "10.0.0.0/33", "10.0.0.0/", "10.0.0.0/+8", "10.0.0.0/08", "x/8", "::/129"]
        {
            assert!(Network::parse(bad).is_err(), "{bad}");
        }
        assert!(Network::parse("10.0.0.5/24").unwrap_err().contains("10.0.0.0/24"));
    }

    #[test]
    fn hosts_and_ports_are_read_per_driver() {
        assert_eq!(host_and_port("redfish", "https://10.0.0.5"), Some(("10.0.0.5".into(), 443)));
        assert_eq!(host_and_port("redfish", "https://2130706433:8000/x"), Some(("127.0.0.1".into(), 8000)));
        assert_eq!(host_and_port("redfish", "http://[::ffff:127.0.0.1]"), Some(("::ffff:7f00:1".into(), 80)));
        assert_eq!(host_and_port("ipmi", "bmc.example"), Some(("bmc.example".into(), 623)));
        assert_eq!(host_and_port("ipmi", "[::1]:6230"), Some(("::1".into(), 6230)));
    }

    #[test]
    fn printable_text_is_bounded_and_has_no_controls() {
        assert_eq!(printable("a\u{1b}[2J\u{7}b\n\n  c\u{202e}d", 20), "a[2Jb cd");
        assert_eq!(printable(&"x".repeat(300), 10), format!("{}…", "x".repeat(9)));
        assert_eq!(printable("exactly10!", 10), "exactly10!");
        assert_eq!(printable("   ", 10), "");
    }
}
