//! Credentials for fetching charts, from the DeployItem's Context in the landscaper cluster
//! (`spec.context`, else the Context `default` when it exists):
//! - Helm repositories and archive URLs: `configurations.helmChartRepoCredentials.auths[]`,
//!   upstream's format `{url, authHeader | secretRef {name, key}, customCAData}`, the longest
//!   `url` prefix of the fetched URL wins;
//! - OCI registries: the Context's `registryPullSecrets`, Secrets with a docker config
//!   (`.dockerconfigjson` or `.dockercfg`) whose entry names the registry host.
//!
//! Only what the fetched source needs is read. Values never reach logs, events or messages.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use landscaper_api::core::Context;
use landscaper_deployer::deployer::Job;
use landscaper_deployer::error::{Error, is_not_found};
use serde::Deserialize;
use serde_json::Value;

/// The key of Helm repository credentials in a Context's `configurations`.
pub const HELM_CHART_REPO_CREDENTIALS: &str = "helmChartRepoCredentials";
/// The Context of items without `spec.context`.
const DEFAULT_CONTEXT: &str = "default";
const OPERATION: &str = "ChartCredentials";

/// Credentials for one repository: the `Authorization` header and extra CAs.
#[derive(Default, Clone)]
pub struct RepositoryAuth {
    /// The complete `Authorization` header value.
    pub header: Option<String>,
    /// Extra CA certificates (PEM).
    pub ca_pem: Option<Vec<u8>>,
}

/// A registry login.
#[derive(Clone)]
pub struct RegistryLogin {
    /// The user.
    pub username: String,
    /// The password or token.
    pub password: String,
}

impl std::fmt::Debug for RepositoryAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RepositoryAuth")
            .field("header", &self.header.as_ref().map(|_| "<redacted>"))
            .field("ca_pem", &self.ca_pem.as_ref().map(Vec::len))
            .finish()
    }
}

impl std::fmt::Debug for RegistryLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryLogin")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .finish()
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct RepoCredentials {
    #[serde(default)]
    auths: Vec<AuthSpec>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AuthSpec {
    #[serde(default)]
    url: String,
    #[serde(default, rename = "customCAData")]
    custom_ca_data: Option<String>,
    #[serde(default)]
    auth_header: Option<String>,
    #[serde(default)]
    secret_ref: Option<SecretKeyRef>,
}

#[derive(Deserialize)]
struct SecretKeyRef {
    name: String,
    #[serde(default)]
    key: Option<String>,
}

/// The item's Context, if it has one: a named Context must exist, the default one may not.
pub async fn context(job: &Job) -> Result<Option<Context>, Error> {
    let namespace = job.item.metadata.namespace.clone().unwrap_or_default();
    let named = job.item.spec.context.as_deref().filter(|c| !c.is_empty());
    let name = named.unwrap_or(DEFAULT_CONTEXT);
    let api: Api<Context> = Api::namespaced(job.ls_client.clone(), &namespace);
    let what = format!("Context {namespace}/{name}");
    // A cluster without the Context resource answers 404 for the type: no Context either.
    let found = match api.get_opt(name).await {
        Ok(found) => found,
        Err(e) if is_not_found(&e) => None,
        Err(e) => return Err(Error::from_kube(OPERATION, &what, &e)),
    };
    match found {
        Some(c) => Ok(Some(c)),
        None if named.is_none() => Ok(None),
        None => Err(Error::transient(
            OPERATION,
            "ContextNotFound",
            format!(
                "DeployItem {} spec.context: {what} not found",
                job.item_name()
            ),
        )),
    }
}

/// Upstream's URL normalisation: no surrounding space or trailing slash, `https://` when the
/// URL names no scheme.
fn normalize_url(url: &str) -> String {
    let url = url.trim().trim_end_matches('/');
    if url.contains("://") {
        url.to_string()
    } else {
        format!("https://{url}")
    }
}

/// The credentials of the Context for `url` (a repository or archive URL).
pub async fn for_repository(
    job: &Job,
    context: Option<&Context>,
    url: &str,
) -> Result<RepositoryAuth, Error> {
    let Some(context) = context else {
        return Ok(RepositoryAuth::default());
    };
    let context_name = context_name(context);
    let field = format!("Context {context_name} configurations.{HELM_CHART_REPO_CREDENTIALS}");
    let Some(raw) = context
        .configurations
        .as_ref()
        .and_then(|c| c.get(HELM_CHART_REPO_CREDENTIALS))
    else {
        return Ok(RepositoryAuth::default());
    };
    let parsed: RepoCredentials = serde_json::from_value(raw.clone())
        .map_err(|e| Error::config(OPERATION, "InvalidContext", format!("{field}: {e}")))?;
    let Some((index, auth)) = best_auth(&parsed.auths, url) else {
        return Ok(RepositoryAuth::default());
    };
    let field = format!("{field}.auths[{index}]");
    let header = match (&auth.auth_header, &auth.secret_ref) {
        (Some(h), None) => Some(h.clone()),
        (None, Some(r)) => Some(secret_value(job, context, r, &field).await?),
        (None, None) => None,
        (Some(_), Some(_)) => {
            return Err(Error::config(
                OPERATION,
                "InvalidContext",
                format!("{field}: only one of authHeader and secretRef may be set"),
            ));
        }
    };
    let ca_pem = auth
        .custom_ca_data
        .as_deref()
        .filter(|c| !c.trim().is_empty())
        .map(|c| ca_bytes(c, &field))
        .transpose()?;
    Ok(RepositoryAuth { header, ca_pem })
}

/// The entry (and its index) whose `url` is the longest prefix of `url`, as upstream picks it.
fn best_auth<'a>(auths: &'a [AuthSpec], url: &str) -> Option<(usize, &'a AuthSpec)> {
    let url = normalize_url(url);
    auths
        .iter()
        .enumerate()
        .filter(|(_, a)| !a.url.trim().is_empty() && url.starts_with(&normalize_url(&a.url)))
        .max_by_key(|(_, a)| normalize_url(&a.url).len())
}

/// `customCAData` is PEM; upstream documents it base64-encoded too, so both are accepted.
fn ca_bytes(data: &str, field: &str) -> Result<Vec<u8>, Error> {
    if data.contains("-----BEGIN") {
        return Ok(data.as_bytes().to_vec());
    }
    let compact: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    STANDARD
        .decode(compact)
        .ok()
        .filter(|pem| pem.windows(10).any(|w| w == b"-----BEGIN"))
        .ok_or_else(|| {
            Error::config(
                OPERATION,
                "InvalidContext",
                format!("{field}.customCAData: neither PEM nor base64-encoded PEM"),
            )
        })
}

fn context_name(context: &Context) -> String {
    format!(
        "{}/{}",
        context.metadata.namespace.as_deref().unwrap_or_default(),
        context.metadata.name.as_deref().unwrap_or_default()
    )
}

async fn read_secret(job: &Job, context: &Context, name: &str) -> Result<Secret, Error> {
    let namespace = context.metadata.namespace.clone().unwrap_or_default();
    Api::<Secret>::namespaced(job.ls_client.clone(), &namespace)
        .get(name)
        .await
        .map_err(|e| Error::from_kube(OPERATION, &format!("Secret {namespace}/{name}"), &e))
}

async fn secret_value(
    job: &Job,
    context: &Context,
    r: &SecretKeyRef,
    field: &str,
) -> Result<String, Error> {
    let Some(key) = r.key.as_deref().filter(|k| !k.is_empty()) else {
        return Err(Error::config(
            OPERATION,
            "InvalidContext",
            format!("{field}.secretRef.key is required"),
        ));
    };
    let secret = read_secret(job, context, &r.name).await?;
    let value = secret
        .data
        .as_ref()
        .and_then(|d| d.get(key))
        .map(|v| String::from_utf8_lossy(&v.0).trim().to_string());
    value.ok_or_else(|| {
        Error::config(
            OPERATION,
            "InvalidContext",
            format!("{field}.secretRef: Secret {} has no key {key}", r.name),
        )
    })
}

/// The login for `registry` (`host[:port]`) from the Context's `registryPullSecrets`.
pub async fn for_registry(
    job: &Job,
    context: Option<&Context>,
    registry: &str,
) -> Result<Option<RegistryLogin>, Error> {
    let Some(context) = context else {
        return Ok(None);
    };
    for (index, r) in context.registry_pull_secrets.iter().enumerate() {
        let secret = read_secret(job, context, &r.name).await?;
        let field = format!(
            "Context {} registryPullSecrets[{index}] (Secret {})",
            context_name(context),
            r.name
        );
        if let Some(login) = docker_login(&secret, registry, &field)? {
            return Ok(Some(login));
        }
    }
    Ok(None)
}

/// The host of a docker config key (`https://host/v1/`, `host:port`, …).
fn registry_host(key: &str) -> &str {
    let rest = key.split_once("://").map_or(key, |(_, r)| r);
    rest.split('/').next().unwrap_or(rest)
}

/// The entry of a dockerconfigjson (or legacy dockercfg) Secret for `registry`.
fn docker_login(
    secret: &Secret,
    registry: &str,
    field: &str,
) -> Result<Option<RegistryLogin>, Error> {
    let data = secret.data.clone().unwrap_or_default();
    let invalid =
        |why: String| Error::config(OPERATION, "InvalidPullSecret", format!("{field}: {why}"));
    let auths = if let Some(json) = data.get(".dockerconfigjson") {
        let v: Value = serde_json::from_slice(&json.0)
            .map_err(|e| invalid(format!(".dockerconfigjson is not JSON: {e}")))?;
        v.get("auths").cloned().unwrap_or(Value::Null)
    } else if let Some(json) = data.get(".dockercfg") {
        serde_json::from_slice(&json.0)
            .map_err(|e| invalid(format!(".dockercfg is not JSON: {e}")))?
    } else {
        return Ok(None);
    };
    let Some(entry) = auths
        .as_object()
        .and_then(|m| m.iter().find(|(k, _)| registry_host(k) == registry))
        .map(|(_, v)| v)
    else {
        return Ok(None);
    };
    let text = |k: &str| entry.get(k).and_then(Value::as_str).unwrap_or_default();
    if !text("username").is_empty() {
        return Ok(Some(RegistryLogin {
            username: text("username").into(),
            password: text("password").into(),
        }));
    }
    let decoded = STANDARD
        .decode(text("auth"))
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|s| {
            s.split_once(':')
                .map(|(u, p)| (u.to_string(), p.to_string()))
        });
    match decoded {
        Some((username, password)) => Ok(Some(RegistryLogin { username, password })),
        None => Err(invalid(format!(
            "the entry of {registry} has neither username nor a base64 user:password auth"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;

    fn secret(key: &str, json: &str) -> Secret {
        Secret {
            data: Some([(key.to_string(), ByteString(json.as_bytes().to_vec()))].into()),
            ..Default::default()
        }
    }

    #[test]
    fn docker_configs_match_the_registry_host() {
        let auth = STANDARD.encode("alice:s3cret");
        let s = secret(
            ".dockerconfigjson",
            &format!(
                r#"{{"auths":{{"https://reg.example:5000/v1/":{{"auth":"{auth}"}},"other":{{"username":"bob","password":"pw"}}}}}}"#
            ),
        );
        let login = docker_login(&s, "reg.example:5000", "f").unwrap().unwrap();
        assert_eq!(
            (login.username.as_str(), login.password.as_str()),
            ("alice", "s3cret")
        );
        let login = docker_login(&s, "other", "f").unwrap().unwrap();
        assert_eq!(login.username, "bob");
        assert!(docker_login(&s, "reg.example", "f").unwrap().is_none());
        let legacy = secret(".dockercfg", &format!(r#"{{"reg":{{"auth":"{auth}"}}}}"#));
        assert!(docker_login(&legacy, "reg", "f").unwrap().is_some());
        let broken = secret(".dockerconfigjson", "{");
        let e = docker_login(&broken, "reg", "Context a/b registryPullSecrets[0]").unwrap_err();
        assert!(
            e.message.contains("registryPullSecrets[0]"),
            "{}",
            e.message
        );
    }

    #[test]
    fn urls_normalize_like_upstream() {
        assert_eq!(
            normalize_url(" charts.example/stable/ "),
            "https://charts.example/stable"
        );
        assert_eq!(normalize_url("http://127.0.0.1:80/"), "http://127.0.0.1:80");
    }

    #[test]
    fn the_longest_matching_url_prefix_wins() {
        let auths: RepoCredentials = serde_json::from_value(serde_json::json!({"auths": [
            {"url": "charts.example", "authHeader": "Basic host"},
            {"url": "https://charts.example/team/", "authHeader": "Basic team"},
            {"url": "http://127.0.0.1:8080", "authHeader": "Basic local"},
        ]}))
        .unwrap();
        let pick = |url: &str| best_auth(&auths.auths, url).map(|(i, _)| i);
        assert_eq!(pick("https://charts.example/team/demo-1.0.0.tgz"), Some(1));
        assert_eq!(pick("https://charts.example/other"), Some(0));
        assert_eq!(pick("http://127.0.0.1:8080/"), Some(2));
        assert_eq!(pick("http://charts.example"), None);
    }

    #[test]
    fn custom_ca_is_pem_or_base64_pem() {
        let pem = "-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n";
        assert_eq!(ca_bytes(pem, "f").unwrap(), pem.as_bytes());
        assert_eq!(
            ca_bytes(&STANDARD.encode(pem), "f").unwrap(),
            pem.as_bytes()
        );
        assert!(
            ca_bytes("not a cert", "f.auths[0]")
                .unwrap_err()
                .message
                .contains("customCAData")
        );
    }
}
