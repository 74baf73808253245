//! ServiceAccount tokens: minting and verification of the JWTs kube-apiserver issues for
//! TokenRequest (bound tokens) and for legacy `kubernetes.io/service-account-token` Secrets.
//!
//! Tokens are signed with a per-cluster ECDSA P-256 key (ES256). Whether the ServiceAccount or
//! the bound object still exists is the caller's check, from [`TokenIdentity`].

mod jwt;
pub mod request;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::{Value, json};

pub use request::TokenRequestSpec;

/// The issuer of legacy Secret-based tokens.
pub const LEGACY_ISSUER: &str = "kubernetes/serviceaccount";

/// go-jose's default clock skew allowance for exp, nbf and iat.
const LEEWAY_SECONDS: i64 = 60;

/// Why a token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Not a JWT we issued: malformed, wrong signature, unknown issuer.
    #[error("invalid bearer token")]
    Invalid,
    /// Issued for other audiences than the request targets.
    #[error("token audiences {token:?} is invalid for the target audiences {target:?}")]
    Audience {
        /// The token's `aud`.
        token: Vec<String>,
        /// The audiences the request accepts.
        target: Vec<String>,
    },
    /// Past `exp`.
    #[error("service account token has expired")]
    Expired,
    /// Before `nbf`.
    #[error("service account token is not valid yet")]
    NotValidYet,
    /// `iat` in the future.
    #[error("service account token is issued in the future")]
    IssuedInTheFuture,
    /// The signing key could not be created or loaded.
    #[error("service account signing key: {0}")]
    Key(String),
}

impl TokenError {
    /// The `status.error` text of a TokenReview that rejected the token.
    pub fn review_message(&self) -> String {
        match self {
            Self::Invalid => self.to_string(),
            other => format!("[invalid bearer token, {other}]"),
        }
    }
}

/// The object a bound token is tied to; the token dies with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundObject {
    /// `Secret`, `Pod` or `Node`.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Its uid.
    pub uid: String,
}

/// What a verified token says about its bearer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenIdentity {
    /// The ServiceAccount's namespace.
    pub namespace: String,
    /// The ServiceAccount's name.
    pub service_account: String,
    /// The ServiceAccount's uid when the token was minted.
    pub service_account_uid: String,
    /// The bound object, for bound tokens.
    pub bound: Option<BoundObject>,
    /// The Secret of a legacy token.
    pub legacy_secret: Option<String>,
    /// The token id (bound tokens).
    pub jti: Option<String>,
    /// The audiences the token was accepted for.
    pub audiences: Vec<String>,
    /// The expiry (Unix seconds) of bound tokens.
    pub expires_at: Option<i64>,
}

impl TokenIdentity {
    /// `system:serviceaccount:<ns>:<name>`.
    pub fn username(&self) -> String {
        format!(
            "system:serviceaccount:{}:{}",
            self.namespace, self.service_account
        )
    }

    /// The groups kube-apiserver gives a ServiceAccount.
    pub fn groups(&self) -> Vec<String> {
        vec![
            "system:serviceaccounts".to_string(),
            format!("system:serviceaccounts:{}", self.namespace),
            "system:authenticated".to_string(),
        ]
    }

    /// The `userInfo` of SelfSubjectReview and TokenReview: username, uid, groups, extra.
    pub fn user_info(&self) -> Value {
        let mut info = json!({
            "username": self.username(),
            "uid": self.service_account_uid,
            "groups": self.groups(),
        });
        let mut extra = serde_json::Map::new();
        if let Some(jti) = &self.jti {
            extra.insert(
                "authentication.kubernetes.io/credential-id".into(),
                json!([format!("JTI={jti}")]),
            );
        }
        if let Some(b) = self.bound.as_ref().filter(|b| b.kind == "Pod") {
            extra.insert(
                "authentication.kubernetes.io/pod-name".into(),
                json!([b.name]),
            );
            extra.insert(
                "authentication.kubernetes.io/pod-uid".into(),
                json!([b.uid]),
            );
        }
        if !extra.is_empty() {
            info["extra"] = Value::Object(extra);
        }
        info
    }
}

/// A freshly minted token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedToken {
    /// The compact JWT.
    pub token: String,
    /// The expiry as RFC 3339 UTC (`status.expirationTimestamp`).
    pub expiration_timestamp: String,
    /// The claims inside the token.
    pub claims: Value,
}

/// The identity being given a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceAccountRef<'a> {
    /// Namespace of the ServiceAccount.
    pub namespace: &'a str,
    /// Name of the ServiceAccount.
    pub name: &'a str,
    /// Uid of the ServiceAccount.
    pub uid: &'a str,
}

/// The per-cluster token signer and verifier.
pub struct TokenIssuer {
    issuer: String,
    api_audiences: Vec<String>,
    key_pair: EcdsaKeyPair,
    key_id: String,
    rng: SystemRandom,
}

impl std::fmt::Debug for TokenIssuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenIssuer")
            .field("issuer", &self.issuer)
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

/// DER prefix of a P-256 SubjectPublicKeyInfo, before the 65-byte uncompressed point.
const P256_SPKI_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
    0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];

impl TokenIssuer {
    /// A new issuer with a fresh key; `issuer` is `--service-account-issuer`, which is also
    /// the API server's audience.
    pub fn generate(issuer: &str) -> Result<Self, TokenError> {
        let rng = SystemRandom::new();
        let doc = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| TokenError::Key("key generation failed".into()))?;
        Self::from_pkcs8(issuer, doc.as_ref())
    }

    /// An issuer with the given key (PKCS#8 DER).
    fn from_pkcs8(issuer: &str, pkcs8: &[u8]) -> Result<Self, TokenError> {
        let rng = SystemRandom::new();
        let key_pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8, &rng)
            .map_err(|e| TokenError::Key(e.to_string()))?;
        let mut spki = P256_SPKI_PREFIX.to_vec();
        spki.extend_from_slice(key_pair.public_key().as_ref());
        // kube-apiserver's key id: base64url of the SHA-256 of the public key's DER.
        let key_id = URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, &spki));
        Ok(Self {
            issuer: issuer.to_string(),
            api_audiences: vec![issuer.to_string()],
            key_pair,
            key_id,
            rng,
        })
    }

    /// The audiences the API server itself accepts, the default of a TokenRequest.
    pub fn api_audiences(&self) -> &[String] {
        &self.api_audiences
    }

    /// The public key as a JWKS document (`/openid/v1/jwks`).
    pub fn jwks(&self) -> Value {
        let point = self.key_pair.public_key().as_ref();
        // An uncompressed point: 0x04, then X and Y of equal length.
        let coords = point.get(1..).unwrap_or_default();
        let (x, y) = coords.split_at(coords.len() / 2);
        json!({"keys": [{
            "use": "sig", "kty": "EC", "kid": self.key_id, "crv": "P-256", "alg": "ES256",
            "x": URL_SAFE_NO_PAD.encode(x), "y": URL_SAFE_NO_PAD.encode(y)
        }]})
    }

    /// The OpenID discovery document (`/.well-known/openid-configuration`).
    pub fn openid_configuration(&self) -> Value {
        json!({
            "issuer": self.issuer,
            "jwks_uri": format!("{}/openid/v1/jwks", self.issuer.trim_end_matches('/')),
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["ES256"]
        })
    }

    fn new_jti(&self) -> String {
        let mut b = [0u8; 16];
        // A failing system RNG leaves zeros; the id stays unique enough for a test cluster.
        let _ = self.rng.fill(&mut b);
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
        format!(
            "{}-{}-{}-{}-{}",
            &h[0..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..32]
        )
    }

    /// Mints a bound token for a validated TokenRequest at time `now` (Unix seconds).
    pub fn issue(
        &self,
        sa: &ServiceAccountRef<'_>,
        spec: &TokenRequestSpec,
        bound: Option<&BoundObject>,
        now: i64,
    ) -> Result<IssuedToken, TokenError> {
        let exp = now.saturating_add(spec.expiration_seconds);
        let mut k8s = json!({
            "namespace": sa.namespace,
            "serviceaccount": {"name": sa.name, "uid": sa.uid},
        });
        if let Some(b) = bound {
            k8s[b.kind.to_lowercase()] = json!({"name": b.name, "uid": b.uid});
        }
        let claims = json!({
            "aud": spec.audiences,
            "exp": exp,
            "iat": now,
            "iss": self.issuer,
            "jti": self.new_jti(),
            "kubernetes.io": k8s,
            "nbf": now,
            "sub": format!("system:serviceaccount:{}:{}", sa.namespace, sa.name),
        });
        let token = jwt::sign(&self.key_pair, &self.rng, &self.key_id, &claims)?;
        Ok(IssuedToken {
            token,
            expiration_timestamp: crate::clock::format_time(exp),
            claims,
        })
    }

    /// Mints the never-expiring token of a legacy `kubernetes.io/service-account-token` Secret.
    pub fn issue_legacy(
        &self,
        sa: &ServiceAccountRef<'_>,
        secret_name: &str,
    ) -> Result<String, TokenError> {
        let claims = json!({
            "iss": LEGACY_ISSUER,
            "kubernetes.io/serviceaccount/namespace": sa.namespace,
            "kubernetes.io/serviceaccount/secret.name": secret_name,
            "kubernetes.io/serviceaccount/service-account.name": sa.name,
            "kubernetes.io/serviceaccount/service-account.uid": sa.uid,
            "sub": format!("system:serviceaccount:{}:{}", sa.namespace, sa.name),
        });
        jwt::sign(&self.key_pair, &self.rng, &self.key_id, &claims)
    }

    /// Verifies a bearer token for the given target audiences (the API audiences when empty)
    /// at time `now` (Unix seconds).
    pub fn verify(
        &self,
        token: &str,
        audiences: &[String],
        now: i64,
    ) -> Result<TokenIdentity, TokenError> {
        let claims = jwt::verify(&self.key_pair, token)?;
        let target = if audiences.is_empty() {
            &self.api_audiences
        } else {
            audiences
        };
        match claims.get("iss").and_then(Value::as_str) {
            Some(LEGACY_ISSUER) => legacy_identity(&claims, target, &self.api_audiences),
            Some(iss) if iss == self.issuer => bound_identity(&claims, target, now),
            _ => Err(TokenError::Invalid),
        }
    }
}

fn str_claim<'a>(claims: &'a Value, pointer: &str) -> Option<&'a str> {
    claims.pointer(pointer).and_then(Value::as_str)
}

fn legacy_identity(
    claims: &Value,
    target: &[String],
    api_audiences: &[String],
) -> Result<TokenIdentity, TokenError> {
    // Legacy tokens carry no audience: they are good for the API server's own audiences only.
    let accepted: Vec<String> = target
        .iter()
        .filter(|a| api_audiences.contains(a))
        .cloned()
        .collect();
    if accepted.is_empty() {
        return Err(TokenError::Audience {
            token: api_audiences.to_vec(),
            target: target.to_vec(),
        });
    }
    let get = |k: &str| {
        claims
            .get(k)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or(TokenError::Invalid)
    };
    Ok(TokenIdentity {
        namespace: get("kubernetes.io/serviceaccount/namespace")?,
        service_account: get("kubernetes.io/serviceaccount/service-account.name")?,
        service_account_uid: get("kubernetes.io/serviceaccount/service-account.uid")?,
        bound: None,
        legacy_secret: Some(get("kubernetes.io/serviceaccount/secret.name")?),
        jti: None,
        audiences: accepted,
        expires_at: None,
    })
}

fn bound_identity(
    claims: &Value,
    target: &[String],
    now: i64,
) -> Result<TokenIdentity, TokenError> {
    let time = |k: &str| claims.get(k).and_then(Value::as_i64);
    if time("nbf").is_some_and(|nbf| now + LEEWAY_SECONDS < nbf) {
        return Err(TokenError::NotValidYet);
    }
    let exp = time("exp").ok_or(TokenError::Invalid)?;
    if now - LEEWAY_SECONDS > exp {
        return Err(TokenError::Expired);
    }
    if time("iat").is_some_and(|iat| now + LEEWAY_SECONDS < iat) {
        return Err(TokenError::IssuedInTheFuture);
    }
    let token_auds: Vec<String> = match claims.get("aud") {
        Some(Value::String(a)) => vec![a.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    let accepted: Vec<String> = target
        .iter()
        .filter(|a| token_auds.contains(a))
        .cloned()
        .collect();
    if accepted.is_empty() {
        return Err(TokenError::Audience {
            token: token_auds,
            target: target.to_vec(),
        });
    }
    let namespace = str_claim(claims, "/kubernetes.io/namespace").ok_or(TokenError::Invalid)?;
    let sa_name =
        str_claim(claims, "/kubernetes.io/serviceaccount/name").ok_or(TokenError::Invalid)?;
    let sa_uid = str_claim(claims, "/kubernetes.io/serviceaccount/uid").unwrap_or_default();
    let bound = ["secret", "pod", "node"].iter().find_map(|k| {
        let obj = claims.pointer(&format!("/kubernetes.io/{k}"))?;
        let mut kind = k.to_string();
        kind[..1].make_ascii_uppercase();
        Some(BoundObject {
            kind,
            name: obj.get("name")?.as_str()?.to_string(),
            uid: obj.get("uid")?.as_str()?.to_string(),
        })
    });
    Ok(TokenIdentity {
        namespace: namespace.to_string(),
        service_account: sa_name.to_string(),
        service_account_uid: sa_uid.to_string(),
        bound,
        legacy_secret: None,
        jti: claims
            .get("jti")
            .and_then(Value::as_str)
            .map(str::to_string),
        audiences: accepted,
        expires_at: Some(exp),
    })
}

#[cfg(test)]
mod tests;
