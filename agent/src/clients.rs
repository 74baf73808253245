//! Connections to the host cluster and the landscaper cluster, and what the agent needs to
//! know about each to describe it to others (URL, CA, TLS settings).

use std::path::Path;

use base64::Engine;
use kube::config::{KubeConfigOptions, Kubeconfig};
use landscaper_api::core::ClusterRestConfig;
use landscaper_deployer::client_config::with_bounded_reads;

/// A connected cluster: its client and how it is reached.
#[derive(Clone)]
pub struct ClusterAccess {
    /// The client.
    pub client: kube::Client,
    /// How the cluster is reached.
    pub endpoint: Endpoint,
}

/// How a cluster is reached: URL and TLS trust, without credentials.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// The API server URL.
    pub server: String,
    /// PEM bundle of the CAs to trust; `None` for the system roots.
    pub ca_pem: Option<String>,
    /// Whether certificate verification is skipped.
    pub insecure: bool,
    /// Server name for verification, when it differs from the URL's host.
    pub tls_server_name: Option<String>,
}

/// Why a cluster could not be connected.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {message}")]
pub struct ClientError {
    what: String,
    message: String,
}

impl ClusterAccess {
    /// Connects with a kubeconfig file.
    pub async fn from_kubeconfig_file(path: &Path, what: &str) -> Result<Self, ClientError> {
        let fail = |message: String| ClientError {
            what: format!("{what} kubeconfig {}", path.display()),
            message,
        };
        let kubeconfig = Kubeconfig::read_from(path).map_err(|e| fail(e.to_string()))?;
        let config =
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .map_err(|e| fail(e.to_string()))?;
        Self::from_config(config).map_err(|e| fail(e.to_string()))
    }

    /// Connects with the in-cluster configuration, or `KUBECONFIG` / `~/.kube/config`.
    pub async fn infer(what: &str) -> Result<Self, ClientError> {
        let fail = |message: String| ClientError {
            what: format!("{what} (in-cluster or KUBECONFIG)"),
            message,
        };
        let config = kube::Config::infer()
            .await
            .map_err(|e| fail(e.to_string()))?;
        Self::from_config(config).map_err(|e| fail(e.to_string()))
    }

    /// Connects with an already built configuration.
    pub fn from_config(config: kube::Config) -> Result<Self, kube::Error> {
        let endpoint = Endpoint {
            server: config
                .cluster_url
                .to_string()
                .trim_end_matches('/')
                .to_owned(),
            ca_pem: config
                .root_cert
                .as_ref()
                .map(|certs| certs.iter().map(|der| pem("CERTIFICATE", der)).collect()),
            insecure: config.accept_invalid_certs,
            tls_server_name: config.tls_server_name.clone(),
        };
        let client = kube::Client::try_from(with_bounded_reads(config))?;
        Ok(Self { client, endpoint })
    }
}

impl Endpoint {
    /// A kubeconfig that reaches this cluster with the given bearer token.
    pub fn kubeconfig_with_token(&self, user: &str, token: &str) -> String {
        self.rest_config().kubeconfig_with_token(user, token)
    }

    /// The cluster as an Environment's `landscaperClusterConfig` describes it.
    pub fn rest_config(&self) -> ClusterRestConfig {
        ClusterRestConfig {
            host: self.server.clone(),
            api_path: String::new(),
            insecure: self.insecure.then_some(true),
            server_name: self.tls_server_name.clone(),
            ca_data: self
                .ca_pem
                .as_ref()
                .map(|ca| base64::engine::general_purpose::STANDARD.encode(ca)),
            next_protos: None,
        }
    }
}

fn pem(label: &str, der: &[u8]) -> String {
    let body = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in body.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).unwrap_or_default());
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// The bearer token in a kubeconfig written by [`Endpoint::kubeconfig_with_token`].
pub fn token_of_kubeconfig(kubeconfig: &str) -> Option<String> {
    let value: serde_json::Value = serde_yaml_ng::from_str(kubeconfig).ok()?;
    value
        .pointer("/users/0/user/token")?
        .as_str()
        .map(str::to_owned)
}

/// Whether a kubeconfig reaches `endpoint` as `user` (ignoring the token).
pub fn kubeconfig_matches(kubeconfig: &str, endpoint: &Endpoint, user: &str) -> bool {
    token_of_kubeconfig(kubeconfig)
        .is_some_and(|token| endpoint.kubeconfig_with_token(user, &token) == kubeconfig)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint() -> Endpoint {
        Endpoint {
            server: "https://10.0.0.1:443".into(),
            ca_pem: Some("PEM".into()),
            insecure: false,
            tls_server_name: None,
        }
    }

    #[test]
    fn kubeconfig_round_trips_its_token() {
        let kubeconfig = endpoint().kubeconfig_with_token("deployer-a", "abc.def.ghi");
        assert_eq!(
            token_of_kubeconfig(&kubeconfig).as_deref(),
            Some("abc.def.ghi")
        );
        assert!(kubeconfig_matches(&kubeconfig, &endpoint(), "deployer-a"));
        assert!(!kubeconfig_matches(&kubeconfig, &endpoint(), "deployer-b"));
        let parsed = Kubeconfig::from_yaml(&kubeconfig).unwrap();
        assert_eq!(
            parsed.clusters[0]
                .cluster
                .as_ref()
                .unwrap()
                .server
                .as_deref(),
            Some("https://10.0.0.1:443")
        );
    }

    #[test]
    fn rest_config_carries_the_ca_base64_encoded() {
        let config = endpoint().rest_config();
        assert_eq!(config.host, "https://10.0.0.1:443");
        assert_eq!(config.ca_data.as_deref(), Some("UEVN"));
        assert_eq!(config.insecure, None);
    }
}
