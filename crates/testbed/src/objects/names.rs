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

/// Go's `qualifiedNameErrMsg` with its examples and regex, as `RegexError` prints it.
const QUALIFIED_PART_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/// Kube's message for an invalid label value.
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/// Whether `s` matches the qualified name part's regex (any length).
fn matches_qualified_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

/// Go's `IsDNS1123Subdomain`: why `s` is no DNS-1123 subdomain (empty when it is one).
fn subdomain_errors(s: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if s.len() > 253 {
        errors.push("must be no more than 253 characters".to_owned());
    }
    if !s.split('.').all(is_label_part) {
        errors.push(SUBDOMAIN_MSG.to_owned());
    }
    errors
}

/// Go's `IsQualifiedName`: why `s` is no qualified name (`[prefix/]name`), in its words; empty
/// when it is one. Label keys and (lower-cased) annotation keys are checked with it.
pub fn qualified_name_errors(s: &str) -> Vec<String> {
    let parts: Vec<&str> = s.split('/').collect();
    let mut errors = Vec::new();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errors.push("prefix part must be non-empty".to_owned());
            } else {
                errors.extend(
                    subdomain_errors(prefix)
                        .into_iter()
                        .map(|e| format!("prefix part {e}")),
                );
            }
            *name
        }
        _ => {
            return vec![format!(
                "a qualified name {QUALIFIED_PART_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )];
        }
    };
    if name.is_empty() {
        errors.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        errors.push("name part must be no more than 63 characters".to_owned());
    }
    if !matches_qualified_part(name) {
        errors.push(format!("name part {QUALIFIED_PART_MSG}"));
    }
    errors
}

/// Go's `IsValidLabelValue`: why `s` cannot be a label value (empty when it can).
pub fn label_value_errors(s: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if s.len() > 63 {
        errors.push("must be no more than 63 characters".to_owned());
    }
    if !s.is_empty() && !matches_qualified_part(s) {
        errors.push(LABEL_VALUE_MSG.to_owned());
    }
    errors
}

/// A `generateName` prefix as Go's name validators check it (`maskTrailingDash`): a trailing
/// `-` would be followed by the random suffix, so the last two characters become `a`.
pub fn masked_prefix(prefix: &str) -> String {
    match prefix.strip_suffix('-') {
        Some(_) if prefix.len() > 1 => format!("{}a", &prefix[..prefix.len() - 2]),
        _ => prefix.to_owned(),
    }
}

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
    fn label_keys_and_values_as_kube_words_them() {
        assert!(qualified_name_errors("app.kubernetes.io/name").is_empty());
        assert!(qualified_name_errors("MyName").is_empty());
        assert_eq!(
            qualified_name_errors("bad key!"),
            [format!("name part {QUALIFIED_PART_MSG}")]
        );
        assert_eq!(
            qualified_name_errors("/x"),
            ["prefix part must be non-empty"]
        );
        assert_eq!(
            qualified_name_errors("Example.com/x"),
            [format!("prefix part {SUBDOMAIN_MSG}")]
        );
        assert_eq!(qualified_name_errors("a/b/c").len(), 1);
        assert_eq!(
            qualified_name_errors(&"n".repeat(64)),
            ["name part must be no more than 63 characters"]
        );
        assert!(label_value_errors("").is_empty());
        assert!(label_value_errors("Exec.root_1").is_empty());
        assert_eq!(label_value_errors("my export"), [LABEL_VALUE_MSG]);
        assert_eq!(
            label_value_errors(&"v".repeat(64)),
            ["must be no more than 63 characters"]
        );
    }

    #[test]
    fn generate_name_prefixes_are_masked_as_go_does() {
        assert_eq!(masked_prefix("web-"), "wea");
        assert_eq!(masked_prefix("-"), "-");
        assert_eq!(masked_prefix("web"), "web");
        assert!(is_subdomain(&masked_prefix("web-1-")));
        assert!(!is_subdomain(&masked_prefix("Web_1-")));
    }

    #[test]
    fn qualified_names() {
        assert!(is_qualified_name("example.com/finalizer"));
        assert!(is_qualified_name("kubernetes"));
        assert!(!is_qualified_name("no/slash/ok/x"));
    }
}
