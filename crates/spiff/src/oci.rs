//! `parseOCIRef`: an OCI image reference split into repository and tag or digest.

/// Splits `ref` into `[repository, tag-or-digest]` the way Landscaper's docker-style parser
/// does: Docker Hub's implicit prefixes do not appear, a digest keeps its algorithm, and a
/// reference without tag or digest has an empty second part.
pub(crate) fn parse_oci_ref(r: &str) -> Result<(String, String), String> {
    if r.is_empty()
        || r.chars()
            .any(|c| c.is_whitespace() || c.is_ascii_uppercase() && !r.contains('@'))
    {
        return Err(format!("invalid OCI reference {r:?}"));
    }
    if let Some((repo, digest)) = r.split_once('@') {
        let repo = repo
            .split_once(':')
            .filter(|(_, t)| !t.contains('/'))
            .map_or(repo, |(n, _)| n);
        if !digest.contains(':') || repo.is_empty() {
            return Err(format!("invalid OCI reference {r:?}"));
        }
        return Ok((strip_hub(repo), digest.to_string()));
    }
    let last_slash = r.rfind('/').map_or(0, |i| i + 1);
    match r[last_slash..].rfind(':') {
        Some(i) => {
            let (repo, tag) = (&r[..last_slash + i], &r[last_slash + i + 1..]);
            if repo.is_empty() || tag.is_empty() {
                return Err(format!("invalid OCI reference {r:?}"));
            }
            Ok((strip_hub(repo), tag.to_string()))
        }
        None if !r.contains(':') => Err(format!("invalid OCI reference {r:?}: no tag or digest")),
        None => Ok((strip_hub(r), String::new())),
    }
}

fn strip_hub(repo: &str) -> String {
    for p in [
        "index.docker.io/library/",
        "docker.io/library/",
        "index.docker.io/",
        "docker.io/",
    ] {
        if let Some(rest) = repo.strip_prefix(p) {
            return rest.to_string();
        }
    }
    repo.to_string()
}

#[cfg(test)]
mod tests {
    use super::parse_oci_ref;

    #[test]
    fn tags_and_digests() {
        assert_eq!(
            parse_oci_ref("myimage:0.0.0").unwrap(),
            ("myimage".into(), "0.0.0".into())
        );
        assert_eq!(
            parse_oci_ref("eu.gcr.io/a/b:1.2@sha256:abc").unwrap(),
            ("eu.gcr.io/a/b".into(), "sha256:abc".into())
        );
        assert_eq!(
            parse_oci_ref("host:5000/img:v1").unwrap(),
            ("host:5000/img".into(), "v1".into())
        );
        assert!(parse_oci_ref("plain").is_err());
    }
}
