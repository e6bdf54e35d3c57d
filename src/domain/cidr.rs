//! IP networks and prefixes, parsed once: what the request rules, the services (subnets,
//! authorized networks) and the BMC address checks read.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// `address/length` of IPv4 with the host bits cleared (`10.0.0.5/24` is `10.0.0.0/24`), as GKE
/// takes an authorized network; `None` for anything else.
pub fn mask_ipv4_prefix(text: &str) -> Option<String> {
    let (address, length) = text.split_once('/')?;
    if length.is_empty() || length.len() > 2 || !length.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let length: u32 = length.parse().ok()?;
    let address: Ipv4Addr = address.parse().ok()?;
    if length > 32 {
        return None;
    }
    Some(format!("{}/{length}", Ipv4Addr::from(u32::from(address) & ipv4_mask(length))))
}

/// An IPv4 range as (first address, last address, prefix length): `10.0.0.5/24` is
/// 10.0.0.0 to 10.0.0.255, length 24; `None` unless `address/length` of IPv4.
pub fn ipv4_range(text: &str) -> Option<(u32, u32, u32)> {
    let (address, length) = text.split_once('/')?;
    let address: Ipv4Addr = address.parse().ok()?;
    let length: u32 = length.parse().ok().filter(|l| *l <= 32)?;
    let mask = ipv4_mask(length);
    let first = u32::from(address) & mask;
    Some((first, first | !mask, length))
}

/// The mask of an IPv4 prefix of `length` bits (at most 32).
fn ipv4_mask(length: u32) -> u32 {
    u32::MAX.checked_shl(32 - length).unwrap_or(0)
}

/// An IP network: an address and a prefix length, its host bits clear.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Network {
    address: IpAddr,
    length: u8,
}

impl Network {
    /// `address/length`: IPv4 or IPv6, with the host bits clear. The error says what is wrong.
    pub fn parse(text: &str) -> Result<Network, String> {
        let shape = || format!("must be a network as address/length (127.0.0.0/8, fd00::/8); got {text:?}");
        let (address, length) = text.split_once('/').ok_or_else(shape)?;
        let address: IpAddr = address.parse().map_err(|_| shape())?;
        let max = if address.is_ipv4() { 32 } else { 128 };
        let digits = length.bytes().all(|b| b.is_ascii_digit()) && !(length.len() > 1 && length.starts_with('0'));
        let length: u8 = match length.parse() {
            Ok(length) if digits && length <= max => length,
            _ => return Err(format!("the length of {text:?} must be 0 to {max}")),
        };
        let network = Network { address, length };
        let masked = network.masked(address);
        if masked != address {
            return Err(format!("{text:?} has host bits set; give {masked}/{length}"));
        }
        Ok(network)
    }

    /// `address` with the bits past this network's length cleared.
    fn masked(&self, address: IpAddr) -> IpAddr {
        match address {
            IpAddr::V4(v4) => IpAddr::V4(Ipv4Addr::from(u32::from(v4) & ipv4_mask(u32::from(self.length)))),
            IpAddr::V6(v6) => {
                let mask = u128::MAX.checked_shl(128 - u32::from(self.length)).unwrap_or(0);
                IpAddr::V6(Ipv6Addr::from(u128::from(v6) & mask))
            }
        }
    }

    /// Whether `address` is in the network; an IPv4 address written as IPv6 is in the IPv4
    /// networks that hold it.
    pub fn contains(&self, address: IpAddr) -> bool {
        let candidates = [Some(address), embedded_ipv4(address).map(IpAddr::V4)];
        candidates
            .into_iter()
            .flatten()
            .any(|candidate| candidate.is_ipv4() == self.address.is_ipv4() && self.masked(candidate) == self.address)
    }
}

impl std::fmt::Display for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.address, self.length)
    }
}

/// The IPv4 address an IPv6 address carries: IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible
/// (`::a.b.c.d`, but not `::` or `::1`) and NAT64 (`64:ff9b::a.b.c.d`).
pub fn embedded_ipv4(address: IpAddr) -> Option<Ipv4Addr> {
    let IpAddr::V6(v6) = address else { return None };
    if let Some(v4) = v6.to_ipv4_mapped() {
        return Some(v4);
    }
    let bits = u128::from(v6);
    let low = Ipv4Addr::from(bits as u32);
    match bits >> 32 {
        0 if bits > 1 => Some(low),
        0x0064_ff9b_0000_0000_0000_0000 => Some(low),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ipv4_range_runs_from_its_first_to_its_last_address() {
        assert_eq!(ipv4_range("10.0.0.5/24"), Some((0x0a00_0000, 0x0a00_00ff, 24)));
        assert_eq!(ipv4_range("0.0.0.0/0"), Some((0, u32::MAX, 0)));
        assert_eq!(ipv4_range("10.0.0.0/33"), None);
        assert_eq!(ipv4_range("fd00::/8"), None);
    }

    #[test]
    fn an_ipv4_prefix_with_host_bits_is_masked() {
        assert_eq!(mask_ipv4_prefix("10.0.0.5/24").as_deref(), Some("10.0.0.0/24"));
        assert_eq!(mask_ipv4_prefix("203.0.113.7/32").as_deref(), Some("203.0.113.7/32"));
        assert_eq!(mask_ipv4_prefix("203.0.113.7/0").as_deref(), Some("0.0.0.0/0"));
        for bad in ["10.0.0.5", "10.0.0.5/33", "10.0.0.5/", "10.0.0.5/+1", "::1/64", "10.0.0/8", "10.0.0.5/024"] {
            assert_eq!(mask_ipv4_prefix(bad), None, "{bad}");
        }
    }
}
