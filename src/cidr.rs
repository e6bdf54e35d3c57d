//! IP prefixes as the API takes them: what both the request rules and the services read.

use std::net::Ipv4Addr;

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
    let mask = u32::MAX.checked_shl(32 - length).unwrap_or(0);
    Some(format!("{}/{length}", Ipv4Addr::from(u32::from(address) & mask)))
}

#[cfg(test)]
mod tests {
    use super::*;

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
