//! Kubeconfigs as `client-go`'s `clientcmd` reads and writes them: read with the fields of
//! its v1 types (others are dropped), reduced to the current context and its cluster, and
//! written as `clientcmd.Write` writes (`apiVersion: v1`, `kind: Config`, keys sorted, empty
//! optional fields left out, `preferences: {}`).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value as Json, json};

/// The command-line flags of the `kubectl oidc-login` exec plugin, after the issuer and client.
const OIDC_FLAGS: &[&str] = &[
    "--oidc-extra-scope=email",
    "--oidc-extra-scope=profile",
    "--oidc-extra-scope=offline_access",
    "--oidc-use-pkce",
    "--grant-type=auto",
];

/// The current context of a kubeconfig, with the context's and its cluster's entries.
struct Current {
    name: String,
    context: Map<String, Json>,
    cluster_name: String,
    cluster: Map<String, Json>,
    /// Kept as `clientcmd` keeps them (it rewrites only contexts, clusters and users).
    preferences: Json,
    extensions: Option<Json>,
}

/// The kubeconfig `text` reduced to its current context and cluster, with one user named
/// `user_name` holding `token`, the context pointing at it.
pub fn with_token(text: &str, user_name: &str, token: &str) -> Result<String, String> {
    let mut current = current(text)?;
    current
        .context
        .insert("user".into(), Json::String(user_name.into()));
    write(current, user_name, json!({"token": token}))
}

/// The kubeconfig `text` reduced to its current context and cluster; the context's user is
/// replaced by the `kubectl oidc-login get-token` exec plugin for `issuer_url` and
/// `client_id`.
pub fn with_oidc_login(text: &str, issuer_url: &str, client_id: &str) -> Result<String, String> {
    let current = current(text)?;
    let user_name = current
        .context
        .get("user")
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string();
    let mut args = vec![
        "oidc-login".to_string(),
        "get-token".to_string(),
        format!("--oidc-issuer-url={issuer_url}"),
        format!("--oidc-client-id={client_id}"),
    ];
    args.extend(OIDC_FLAGS.iter().map(|flag| flag.to_string()));
    // `env` and `provideClusterInfo` have no `omitempty` in client-go's v1 ExecConfig.
    let exec = json!({
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "args": args,
        "command": "kubectl",
        "env": null,
        "provideClusterInfo": false,
    });
    write(current, &user_name, json!({"exec": exec}))
}

/// The standard padded base64 of `text`, as the functions return kubeconfigs.
pub fn base64(text: &str) -> String {
    STANDARD.encode(text.as_bytes())
}

fn current(text: &str) -> Result<Current, String> {
    let config = match crate::values::parse_yaml(text) {
        Ok(Json::Object(map)) => map,
        Ok(Json::Null) => Map::new(),
        Ok(_) => return Err("failed to load config: the kubeconfig is not a map".into()),
        Err(e) => return Err(format!("failed to load config: {e}")),
    };
    let name = config
        .get("current-context")
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string();
    let context = named(&config, "contexts", "context", &name)
        .filter(|_| !name.is_empty())
        .ok_or_else(|| format!("current context {name:?} not found"))?;
    let context = context_fields(context)?;
    let cluster_name = context
        .get("cluster")
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string();
    let cluster = named(&config, "clusters", "cluster", &cluster_name)
        .ok_or_else(|| format!("current cluster {cluster_name:?} not found"))?;
    let cluster = cluster_fields(cluster)?;
    let preferences = preferences(config.get("preferences"));
    let extensions = config
        .get("extensions")
        .filter(|e| e.as_array().is_some_and(|l| !l.is_empty()))
        .cloned();
    Ok(Current {
        name,
        context,
        cluster_name,
        cluster,
        preferences,
        extensions,
    })
}

/// The `field` of the entry named `name` in the list `list` of the config.
fn named<'a>(
    config: &'a Map<String, Json>,
    list: &str,
    field: &str,
    name: &str,
) -> Option<&'a Json> {
    config
        .get(list)?
        .as_array()?
        .iter()
        .find(|entry| entry.get("name").and_then(Json::as_str) == Some(name))
        .map(|entry| entry.get(field).unwrap_or(&Json::Null))
}

/// A context with client-go's v1 fields: `cluster` and `user` always, the others when set.
fn context_fields(context: &Json) -> Result<Map<String, Json>, String> {
    let mut out = Map::new();
    out.insert("cluster".into(), string(context, "cluster")?.into());
    if let Some(extensions) = non_empty_list(context, "extensions") {
        out.insert("extensions".into(), extensions);
    }
    let namespace = string(context, "namespace")?;
    if !namespace.is_empty() {
        out.insert("namespace".into(), namespace.into());
    }
    out.insert("user".into(), string(context, "user")?.into());
    Ok(out)
}

/// A cluster with client-go's v1 fields: `server` always, the others when set; the CA data
/// decoded and encoded again, as a `[]byte` field is.
fn cluster_fields(cluster: &Json) -> Result<Map<String, Json>, String> {
    let mut out = Map::new();
    let text = |key: &str, out: &mut Map<String, Json>| -> Result<(), String> {
        let value = string(cluster, key)?;
        if !value.is_empty() {
            out.insert(key.into(), value.into());
        }
        Ok(())
    };
    text("certificate-authority", &mut out)?;
    let ca_data = string(cluster, "certificate-authority-data")?;
    if !ca_data.is_empty() {
        let bytes = STANDARD
            .decode(ca_data.as_bytes())
            .map_err(|e| format!("failed to load config: certificate-authority-data: {e}"))?;
        if !bytes.is_empty() {
            out.insert(
                "certificate-authority-data".into(),
                STANDARD.encode(bytes).into(),
            );
        }
    }
    if flag(cluster, "disable-compression")? {
        out.insert("disable-compression".into(), true.into());
    }
    if let Some(extensions) = non_empty_list(cluster, "extensions") {
        out.insert("extensions".into(), extensions);
    }
    if flag(cluster, "insecure-skip-tls-verify")? {
        out.insert("insecure-skip-tls-verify".into(), true.into());
    }
    text("proxy-url", &mut out)?;
    out.insert("server".into(), string(cluster, "server")?.into());
    text("tls-server-name", &mut out)?;
    Ok(out)
}

fn preferences(given: Option<&Json>) -> Json {
    let mut out = Map::new();
    if let Some(given) = given {
        if given.get("colors").and_then(Json::as_bool) == Some(true) {
            out.insert("colors".into(), true.into());
        }
        if let Some(extensions) = non_empty_list(given, "extensions") {
            out.insert("extensions".into(), extensions);
        }
    }
    Json::Object(out)
}

fn string(object: &Json, key: &str) -> Result<String, String> {
    match object.get(key) {
        None | Some(Json::Null) => Ok(String::new()),
        Some(Json::String(s)) => Ok(s.clone()),
        Some(other) => Err(format!(
            "failed to load config: {key} must be a string, not {other}"
        )),
    }
}

fn flag(object: &Json, key: &str) -> Result<bool, String> {
    match object.get(key) {
        None | Some(Json::Null) => Ok(false),
        Some(Json::Bool(b)) => Ok(*b),
        Some(other) => Err(format!(
            "failed to load config: {key} must be a boolean, not {other}"
        )),
    }
}

fn non_empty_list(object: &Json, key: &str) -> Option<Json> {
    object
        .get(key)
        .filter(|v| v.as_array().is_some_and(|l| !l.is_empty()))
        .cloned()
}

/// Writes the reduced config with one user, keys in the order `clientcmd.Write` sorts them.
fn write(current: Current, user_name: &str, user: Json) -> Result<String, String> {
    let mut config = Map::new();
    config.insert("apiVersion".into(), "v1".into());
    config.insert(
        "clusters".into(),
        json!([{"cluster": current.cluster, "name": current.cluster_name}]),
    );
    config.insert(
        "contexts".into(),
        json!([{"context": current.context, "name": current.name}]),
    );
    config.insert("current-context".into(), current.name.clone().into());
    if let Some(extensions) = current.extensions {
        config.insert("extensions".into(), extensions);
    }
    config.insert("kind".into(), "Config".into());
    config.insert("preferences".into(), current.preferences);
    config.insert("users".into(), json!([{"name": user_name, "user": user}]));
    landscaper_chart::formats::yaml::marshal(&crate::values::to_data(&Json::Object(config)))
        .map_err(|e| format!("failed to write config: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KUBECONFIG: &str = "apiVersion: v1
kind: Config
current-context: main
clusters:
- name: other
  cluster: {server: https://other.example}
- name: main-cluster
  cluster:
    server: https://api.example:6443
    certificate-authority-data: Y2EtcGVt
    unknown-field: dropped
contexts:
- name: other
  context: {cluster: other, user: other}
- name: main
  context: {cluster: main-cluster, user: admin, namespace: team}
users:
- name: admin
  user: {token: secret-admin-token}
- name: other
  user: {username: a, password: b}
";

    #[test]
    fn a_token_kubeconfig_keeps_only_the_current_context_and_the_new_user() {
        let out = with_token(KUBECONFIG, "deployer", "the-token").unwrap();
        assert_eq!(
            out,
            "apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: Y2EtcGVt
    server: https://api.example:6443
  name: main-cluster
contexts:
- context:
    cluster: main-cluster
    namespace: team
    user: deployer
  name: main
current-context: main
kind: Config
preferences: {}
users:
- name: deployer
  user:
    token: the-token
"
        );
        assert!(!out.contains("secret-admin-token"));
    }

    #[test]
    fn an_oidc_kubeconfig_runs_kubectl_oidc_login_for_the_contexts_user() {
        let out = with_oidc_login(KUBECONFIG, "https://issuer.example", "my-client").unwrap();
        assert_eq!(
            out,
            "apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: Y2EtcGVt
    server: https://api.example:6443
  name: main-cluster
contexts:
- context:
    cluster: main-cluster
    namespace: team
    user: admin
  name: main
current-context: main
kind: Config
preferences: {}
users:
- name: admin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      args:
      - oidc-login
      - get-token
      - --oidc-issuer-url=https://issuer.example
      - --oidc-client-id=my-client
      - --oidc-extra-scope=email
      - --oidc-extra-scope=profile
      - --oidc-extra-scope=offline_access
      - --oidc-use-pkce
      - --grant-type=auto
      command: kubectl
      env: null
      provideClusterInfo: false
"
        );
    }

    #[test]
    fn a_missing_current_context_or_cluster_is_named() {
        let no_context = KUBECONFIG.replace("current-context: main", "current-context: gone");
        assert_eq!(
            with_token(&no_context, "sa", "t").unwrap_err(),
            "current context \"gone\" not found"
        );
        let no_cluster = KUBECONFIG.replace("cluster: main-cluster, user", "cluster: x, user");
        assert_eq!(
            with_token(&no_cluster, "sa", "t").unwrap_err(),
            "current cluster \"x\" not found"
        );
        assert!(
            with_token("a: [", "sa", "t")
                .unwrap_err()
                .starts_with("failed to load config:")
        );
    }
}
