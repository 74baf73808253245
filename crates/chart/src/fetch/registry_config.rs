//! Registry credentials as Helm reads them for OCI registries (`--registry-config`, written
//! by `helm registry login` or `docker login`): a Docker `config.json` whose `auths` map a
//! registry host to `auth` (base64 of `user:password`) or `username`/`password`.

use std::path::Path;

use base64::Engine as _;

use super::FetchError;
use crate::formats::json;
use crate::formats::tree::Data;

/// User and password for `registry` (`host[:port]`) from the config file at `path`; `None`
/// when the file does not exist or has no entry for the registry.
pub fn registry_credentials(
    path: &Path,
    registry: &str,
) -> Result<Option<(String, String)>, FetchError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(invalid(path, e)),
    };
    let config = json::parse(&text).map_err(|e| invalid(path, e))?;
    let Some(auths) = config
        .as_map()
        .and_then(|c| c.get("auths"))
        .and_then(Data::as_map)
    else {
        return Ok(None);
    };
    // Docker writes `host`, `https://host` or `https://host/v1/` as keys.
    let entry = auths.iter().find_map(|(key, entry)| {
        let host = key
            .trim_start_matches("https://")
            .trim_start_matches("http://");
        let host = host.split('/').next().unwrap_or(host);
        (host == registry).then_some(entry)
    });
    let Some(entry) = entry.and_then(Data::as_map) else {
        return Ok(None);
    };
    let field = |key: &str| entry.get(key).and_then(Data::as_str).unwrap_or("");
    if !field("auth").is_empty() {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(field("auth"))
            .map_err(|_| invalid(path, format!("auth of {registry} is not valid base64")))?;
        let decoded = String::from_utf8_lossy(&decoded).into_owned();
        let Some((user, password)) = decoded.split_once(':') else {
            return Err(invalid(
                path,
                format!("auth of {registry} is not base64 of user:password"),
            ));
        };
        return Ok(Some((user.to_string(), password.to_string())));
    }
    if !field("username").is_empty() {
        return Ok(Some((
            field("username").to_string(),
            field("password").to_string(),
        )));
    }
    Ok(None)
}

/// The error never quotes the file's content: it holds secrets.
fn invalid(path: &Path, e: impl std::fmt::Display) -> FetchError {
    FetchError::invalid(format!("loading registry config {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auths_are_read_by_host() {
        let dir = std::env::temp_dir().join(format!("landscaper-regcfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("config.json");
        std::fs::write(
            &file,
            r#"{"auths":{"127.0.0.1:5000":{"auth":"YWxpY2U6czNjcmV0"},"https://ghcr.io":{"username":"bob","password":"pw"}}}"#,
        )
        .unwrap();
        assert_eq!(
            registry_credentials(&file, "127.0.0.1:5000").unwrap(),
            Some(("alice".to_string(), "s3cret".to_string()))
        );
        assert_eq!(
            registry_credentials(&file, "ghcr.io").unwrap(),
            Some(("bob".to_string(), "pw".to_string()))
        );
        assert_eq!(registry_credentials(&file, "quay.io").unwrap(), None);
        assert_eq!(registry_credentials(&dir.join("none"), "x").unwrap(), None);
        std::fs::write(&file, "{\"auths\": {\"h\": {\"auth\": \"%%%\"}}}").unwrap();
        let err = registry_credentials(&file, "h").unwrap_err().message;
        assert!(!err.contains("%%%"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
