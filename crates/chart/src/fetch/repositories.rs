//! Helm's repository configuration (`repositories.yaml`, written by `helm repo add`) and the
//! index files `helm repo update` caches (`<repository-cache>/<name>-index.yaml`): how a
//! chart reference `repo/chart` finds its repository, credentials and index.

use std::path::{Path, PathBuf};

use super::{FetchError, FetchErrorKind, FetchOptions};
use crate::formats::tree::{Data, Map};
use crate::formats::yaml;

/// One named repository of `repositories.yaml`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Repository {
    /// The name `helm repo add` gave it.
    pub name: String,
    /// The repository URL (its `index.yaml` lives below it).
    pub url: String,
    /// Basic-auth user.
    pub username: Option<String>,
    /// Basic-auth password.
    pub password: Option<String>,
    /// A PEM file of extra CA certificates.
    pub ca_file: Option<PathBuf>,
    /// Whether to skip TLS verification.
    pub insecure_skip_tls_verify: bool,
    /// Whether credentials go to every host (not only the repository's).
    pub pass_credentials: bool,
    /// Client certificate, which this crate cannot present.
    pub cert_file: Option<String>,
}

impl Repository {
    /// The fetch options for this repository: its own credentials and TLS settings, with the
    /// command line's taking precedence where given.
    pub fn options(&self, command_line: &FetchOptions) -> FetchOptions {
        let mut options = command_line.clone();
        if options.username.is_none() {
            options.username = self.username.clone();
            options.password = self.password.clone();
        }
        if options.ca_file.is_none() {
            options.ca_file = self.ca_file.clone();
        }
        options.insecure_skip_tls_verify |= self.insecure_skip_tls_verify;
        options.pass_credentials |= self.pass_credentials;
        options
    }
}

/// Finds repository `name` in the `repositories.yaml` at `path`; a missing file has no
/// repositories, as in Helm.
pub fn find_repository(path: &Path, name: &str) -> Result<Repository, FetchError> {
    let not_found = || FetchError::new(FetchErrorKind::NotFound, format!("repo {name} not found"));
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(not_found()),
        Err(e) => {
            return Err(FetchError::invalid(format!(
                "couldn't load repositories file ({}): {e}",
                path.display()
            )));
        }
    };
    let config = yaml::parse_values(&text).map_err(|e| {
        FetchError::invalid(format!(
            "couldn't load repositories file ({}): {}",
            path.display(),
            e.helm_message()
        ))
    })?;
    let Some(Data::List(entries)) = config.get("repositories") else {
        return Err(not_found());
    };
    entries
        .iter()
        .filter_map(Data::as_map)
        .find(|entry| text_field(entry, "name").as_deref() == Some(name))
        .map(|entry| Repository {
            name: name.to_string(),
            url: text_field(entry, "url").unwrap_or_default(),
            username: text_field(entry, "username"),
            password: text_field(entry, "password"),
            ca_file: text_field(entry, "caFile").map(PathBuf::from),
            insecure_skip_tls_verify: bool_field(entry, "insecure_skip_tls_verify"),
            pass_credentials: bool_field(entry, "pass_credentials"),
            cert_file: text_field(entry, "certFile"),
        })
        .ok_or_else(not_found)
}

/// The index `helm repo update` cached for `repository` under `cache_dir`, as Helm reads it
/// for `repo/chart` references (it never fetches the index itself then).
pub fn cached_index(cache_dir: &Path, repository: &str) -> Result<String, FetchError> {
    let path = cache_dir.join(format!("{repository}-index.yaml"));
    std::fs::read_to_string(&path).map_err(|e| {
        let reason = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
            _ => e.to_string(),
        };
        FetchError::invalid(format!(
            "no cached repo found. (try 'helm repo update'): open {}: {reason}",
            path.display()
        ))
    })
}

fn text_field(entry: &Map, key: &str) -> Option<String> {
    entry
        .get(key)
        .and_then(Data::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn bool_field(entry: &Map, key: &str) -> bool {
    matches!(entry.get(key), Some(Data::Bool(true)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repositories_are_found_by_name() {
        let dir = std::env::temp_dir().join(format!("landscaper-repos-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("repositories.yaml");
        std::fs::write(
            &file,
            "apiVersion: \"\"\nrepositories:\n- name: a\n  url: https://a.example/charts\n  username: u\n  password: p\n  pass_credentials: true\n- name: b\n  url: http://b\n",
        )
        .unwrap();
        let a = find_repository(&file, "a").unwrap();
        assert_eq!(a.url, "https://a.example/charts");
        assert_eq!(a.username.as_deref(), Some("u"));
        assert!(a.pass_credentials);
        assert_eq!(
            find_repository(&file, "c").unwrap_err().message,
            "repo c not found"
        );
        assert_eq!(
            find_repository(&dir.join("none.yaml"), "a")
                .unwrap_err()
                .message,
            "repo a not found"
        );
        let err = cached_index(&dir, "a").unwrap_err().message;
        assert!(
            err.starts_with("no cached repo found. (try 'helm repo update'): open "),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
