//! What an `http(s)://` URL that the control plane will fetch or call must look like: a host any
//! URL parser reads alike (a DNS name, a dotted quad or an IPv6 address in brackets), an optional
//! port, and no user info, which would put a secret where every response shows it.

/// What is wrong with `url`, said so that it can follow a field's name; `None` when it is an
/// `http://` or `https://` URL of that shape. It never quotes the URL.
pub fn problem(url: &str) -> Option<String> {
    const SHAPE: &str = "an http:// or https:// URL whose host is a DNS name or an IPv6 address in brackets, \
                         such as https://images.example.com:8443/path";
    let fault = |what: &str| Some(format!("{what}: must be {SHAPE}"));
    let Some((scheme, rest)) = url.split_once("://") else { return fault("has no scheme") };
    if scheme != "http" && scheme != "https" {
        return fault("the scheme is not http or https");
    }
    let authority = rest.split(['/', '?', '#', '\\']).next().unwrap_or_default();
    if authority.contains('@') {
        return fault("has user info before the host");
    }
    let host_character = |c: char| c.is_ascii_alphanumeric() || ".-:[]".contains(c);
    if authority.is_empty() || !authority.chars().all(host_character) {
        return fault("the host is not a DNS name or an IPv6 address in brackets, with an optional port");
    }
    if url.contains('\\') {
        return fault("has a backslash, which URL parsers read differently");
    }
    match reqwest::Url::parse(url) {
        Ok(parsed) if parsed.host().is_some() => None,
        Ok(_) => fault("has no host"),
        Err(error) => fault(&format!("is not a URL ({error})")),
    }
}

#[cfg(test)]
mod tests {
    use super::problem;

    #[test]
    fn a_url_is_accepted_only_when_its_host_reads_the_same_to_any_parser() {
        for good in [
            "https://container.googleapis.com",
            "http://127.0.0.1:8080/v1/",
            "https://[::1]:8443",
            "https://images.example/a.iso?signature=x",
        ] {
            assert_eq!(problem(good), None, "{good}");
        }
        // Each was accepted by the fields' patterns alone; a bracket out of place makes some URL
        // parsers (Python's urlsplit) raise where ours refuses.
        for bad in [
            "http://[",
            "http://a]b",
            "https://[::1",
            "https://[zz::1]",
            "http://user:secret@host",
            "http://host\\@other/",
            "http://ho\\st/",
            "https://",
            "ftp://host",
            "host/path",
        ] {
            let said = problem(bad).unwrap_or_else(|| panic!("{bad} accepted"));
            assert!(!said.contains("secret") && said.contains("must be an http://"), "{said}");
        }
    }
}
