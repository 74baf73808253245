//! OCI image references as Landscaper's `parseOCIRef` splits them: repository and tag or
//! digest, with Docker Hub's implicit prefixes left out.

/// Docker Hub's registry as references are normalized to it.
const DOCKER_HUB: &str = "index.docker.io";

/// `(repository, tag or digest)`; the second part is empty when the reference has neither.
pub fn parse(reference: &str) -> Result<(String, String), String> {
    if !reference.contains(':') {
        return Err(format!(
            "could not parse reference {reference:?}: a tag or digest is required"
        ));
    }
    let (name, version) = match reference.split_once('@') {
        Some((name, digest)) => {
            if !digest.contains(':') || digest.ends_with(':') {
                return Err(format!(
                    "could not parse reference {reference:?}: invalid digest"
                ));
            }
            (name, digest.to_string())
        }
        None => {
            let last_slash = reference.rfind('/').map_or(0, |i| i + 1);
            match reference[last_slash..].rfind(':') {
                Some(i) => (
                    &reference[..last_slash + i],
                    reference[last_slash + i + 1..].to_string(),
                ),
                None => (reference, String::new()),
            }
        }
    };
    if name.is_empty()
        || name
            .chars()
            .any(|c| c.is_ascii_uppercase() || c.is_whitespace())
    {
        return Err(format!(
            "could not parse reference {reference:?}: invalid repository"
        ));
    }
    Ok((strip_docker_hub(name), version))
}

/// The repository without the Docker Hub prefixes normalization would add.
fn strip_docker_hub(name: &str) -> String {
    let (first, rest) = name.split_once('/').unwrap_or(("", name));
    let is_registry = first.contains('.') || first.contains(':') || first == "localhost";
    let path = if !is_registry {
        name
    } else if first == DOCKER_HUB || first == "docker.io" {
        rest
    } else {
        return name.to_string();
    };
    path.strip_prefix("library/").unwrap_or(path).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(r: &str) -> (String, String) {
        parse(r).unwrap()
    }

    #[test]
    fn references_split_into_repository_and_version() {
        assert_eq!(split("myimage:0.0.0"), ("myimage".into(), "0.0.0".into()));
        assert_eq!(
            split("myimage@sha256:6637"),
            ("myimage".into(), "sha256:6637".into())
        );
        assert_eq!(
            split("eu.gcr.io/proj/img:1.2"),
            ("eu.gcr.io/proj/img".into(), "1.2".into())
        );
        assert_eq!(
            split("localhost:5000/img"),
            ("localhost:5000/img".into(), String::new())
        );
        assert_eq!(
            split("docker.io/library/nginx:1"),
            ("nginx".into(), "1".into())
        );
        assert_eq!(
            split("index.docker.io/bitnami/nginx:1"),
            ("bitnami/nginx".into(), "1".into())
        );
    }

    #[test]
    fn references_without_a_colon_or_with_bad_names_fail() {
        assert!(parse("myimage").is_err());
        assert!(parse("MyImage:1").is_err());
    }
}
