//! A self-signed CA and a loopback server certificate, made fresh for each testbed.

use rcgen::{
    BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose, SanType,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

/// The certificates of one testbed: a CA that clients trust and the server's TLS config.
pub struct Tls {
    /// The CA certificate in PEM, for kubeconfigs and `kube-root-ca.crt`.
    pub ca_pem: String,
    /// The server configuration (HTTP/2 and HTTP/1.1 via ALPN).
    pub server_config: Arc<rustls::ServerConfig>,
}

/// Why certificates could not be made.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// Certificate generation failed.
    #[error("generating certificates: {0}")]
    Generate(#[from] rcgen::Error),
    /// rustls refused the certificate.
    #[error("configuring TLS: {0}")]
    Config(#[from] rustls::Error),
}

impl Tls {
    /// Makes a CA and a server certificate for `localhost` and 127.0.0.1.
    pub fn generate() -> Result<Self, TlsError> {
        let ca_key = KeyPair::generate()?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "testbed-ca");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::CrlSign,
        ];
        let ca_cert = ca_params.self_signed(&ca_key)?;
        let issuer = Issuer::new(ca_params, ca_key);

        let server_key = KeyPair::generate()?;
        let mut params = CertificateParams::new(vec![
            "localhost".to_string(),
            "kubernetes.default.svc".to_string(),
        ])?;
        params
            .subject_alt_names
            .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        params
            .distinguished_name
            .push(DnType::CommonName, "testbed");
        let server_cert = params.signed_by(&server_key, &issuer)?;

        let chain = vec![CertificateDer::from(server_cert.der().to_vec())];
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der()));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(chain, key)?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Self {
            ca_pem: ca_cert.pem(),
            server_config: Arc::new(config),
        })
    }
}
