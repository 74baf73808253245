//! Compact JWS with ES256: just enough JWT for tokens this server signs and verifies itself.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED, EcdsaKeyPair, KeyPair, UnparsedPublicKey};
use serde_json::{Value, json};

use super::TokenError;

/// Signs claims into `header.payload.signature`.
pub(super) fn sign(
    key: &EcdsaKeyPair,
    rng: &SystemRandom,
    key_id: &str,
    claims: &Value,
) -> Result<String, TokenError> {
    let header = json!({"alg": "ES256", "kid": key_id});
    let signing_input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let signature = key
        .sign(rng, signing_input.as_bytes())
        .map_err(|_| TokenError::Key("signing failed".into()))?;
    Ok(format!(
        "{signing_input}.{}",
        URL_SAFE_NO_PAD.encode(signature.as_ref())
    ))
}

/// Checks the signature with the key's public half and returns the claims.
pub(super) fn verify(key: &EcdsaKeyPair, token: &str) -> Result<Value, TokenError> {
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(TokenError::Invalid);
    };
    let decode = |s: &str| URL_SAFE_NO_PAD.decode(s).map_err(|_| TokenError::Invalid);
    let header: Value =
        serde_json::from_slice(&decode(header)?).map_err(|_| TokenError::Invalid)?;
    if header.get("alg").and_then(Value::as_str) != Some("ES256") {
        return Err(TokenError::Invalid);
    }
    let signing_input_len = token.len() - signature.len() - 1;
    let public = UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, key.public_key().as_ref());
    public
        .verify(
            token
                .as_bytes()
                .get(..signing_input_len)
                .unwrap_or_default(),
            &decode(signature)?,
        )
        .map_err(|_| TokenError::Invalid)?;
    let claims: Value =
        serde_json::from_slice(&decode(payload)?).map_err(|_| TokenError::Invalid)?;
    if claims.is_object() {
        Ok(claims)
    } else {
        Err(TokenError::Invalid)
    }
}
