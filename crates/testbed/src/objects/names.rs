//! Validation of object names, label keys and finalizer names, with kube's messages.

/// Kube's message for an invalid DNS-1123 subdomain.
pub const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// Kube's message for an invalid DNS-1123 label.
pub const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

fn is_label_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

/// Whether `s` is a DNS-1123 subdomain (at most 253 characters).
pub fn is_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_label_part)
}

/// Whether `s` is a DNS-1123 label (at most 63 characters).
pub fn is_dns_label(s: &str) -> bool {
    s.len() <= 63 && is_label_part(s)
}

/// Whether `s` is a qualified name part: alphanumerics, `-`, `_`, `.`, alphanumeric ends.
pub fn is_qualified_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

/// Whether `s` is a qualified name: `[prefix/]name` with a DNS subdomain prefix.
pub fn is_qualified_name(s: &str) -> bool {
    match s.split_once('/') {
        Some((prefix, name)) => {
            !prefix.is_empty() && is_subdomain(prefix) && is_qualified_part(name)
        }
        None => is_qualified_part(s),
    }
}

/// Kube's message for an invalid qualified name.
pub const QUALIFIED_MSG: &str = "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";

/// Whether a ConfigMap/Secret data key is valid.
pub fn is_config_key(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && s != "."
        && s != ".."
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subdomains_and_labels() {
        assert!(is_subdomain("cm-1.example"));
        assert!(!is_subdomain("Bad_Name"));
        assert!(is_dns_label("ns-1"));
        assert!(!is_dns_label("a.b"));
    }

    #[test]
    fn qualified_names() {
        assert!(is_qualified_name("example.com/finalizer"));
        assert!(is_qualified_name("kubernetes"));
        assert!(!is_qualified_name("no/slash/ok/x"));
    }
}
