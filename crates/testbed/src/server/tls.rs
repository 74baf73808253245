//! A self-signed CA and a loopback server certificate, made fresh for each testbed.

use rcgen::{
    BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose, SanType,
};
use rustls::CipherSuite;
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
        let mut provider = rustls::crypto::ring::default_provider();
        // Like kube-apiserver (Go's crypto/tls on hardware with AES), the server picks
        // AES-128-GCM before AES-256-GCM whatever the client lists first: it costs 10 AES
        // rounds per block instead of 14, on every byte of every watch stream.
        provider.cipher_suites.sort_by_key(|s| {
            !matches!(
                s.suite(),
                CipherSuite::TLS13_AES_128_GCM_SHA256
                    | CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
                    | CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
            )
        });
        let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(provider))
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(chain, key)?;
        config.ignore_client_order = true;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Self {
            ca_pem: ca_cert.pem(),
            server_config: Arc::new(config),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::pki_types::pem::PemObject;

    #[test]
    fn aes_128_gcm_is_chosen_before_a_clients_first_choice() {
        let tls = Tls::generate().unwrap();
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_slice(tls.ca_pem.as_bytes()).unwrap())
            .unwrap();
        // rustls clients, kube's among them, list AES-256-GCM first.
        let client = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
        let mut client =
            rustls::ClientConnection::new(Arc::new(client), "localhost".try_into().unwrap())
                .unwrap();
        let mut server = rustls::ServerConnection::new(tls.server_config).unwrap();
        while client.is_handshaking() || server.is_handshaking() {
            let mut wire = Vec::new();
            client.write_tls(&mut wire).unwrap();
            server.read_tls(&mut wire.as_slice()).unwrap();
            server.process_new_packets().unwrap();
            let mut wire = Vec::new();
            server.write_tls(&mut wire).unwrap();
            client.read_tls(&mut wire.as_slice()).unwrap();
            client.process_new_packets().unwrap();
        }
        let suite = client.negotiated_cipher_suite().unwrap().suite();
        assert_eq!(suite, CipherSuite::TLS13_AES_128_GCM_SHA256);
    }
}
