//! Reading the lifetime of a ServiceAccount token, to know when to renew it.
//!
//! The agent only reads the `iat` and `exp` claims of tokens it requested itself; it does not
//! verify signatures (the API server does that when the token is used).

use std::sync::LazyLock;

use base64::Engine;
use k8s_openapi::jiff::Timestamp;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;

/// Renewals of the deployer identity's token, by result (`landscaper_agent_token_renewals_total`).
static RENEWALS: LazyLock<Family<Vec<(String, String)>, Counter>> = LazyLock::new(|| {
    let family = Family::default();
    landscaper_process::metrics::register(
        "landscaper_agent_token_renewals",
        "TokenRequest tokens issued for the deployer identity's target-access Secret, by result (success, error)",
        family.clone(),
    );
    family
});

/// Counts one attempt to issue a fresh deployer token.
pub fn renewed(success: bool) {
    let result = if success { "success" } else { "error" };
    RENEWALS
        .get_or_create(&vec![("result".to_owned(), result.to_owned())])
        .inc();
}

/// When a token was issued and when it expires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenLifetime {
    /// Issued at.
    pub issued: Timestamp,
    /// Expires at.
    pub expires: Timestamp,
}

impl TokenLifetime {
    /// Reads the lifetime from a JWT; `None` when the token is not a JWT with both claims.
    pub fn of(token: &str) -> Option<Self> {
        let payload = token.split('.').nth(1)?;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload.trim_end_matches('='))
            .ok()?;
        let claims: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
        let issued = Timestamp::from_second(claims.get("iat")?.as_i64()?).ok()?;
        let expires = Timestamp::from_second(claims.get("exp")?.as_i64()?).ok()?;
        (expires > issued).then_some(Self { issued, expires })
    }

    /// When the token should be replaced: at 80% of its lifetime.
    pub fn renew_at(&self) -> Timestamp {
        let lifetime = self.expires.duration_since(self.issued);
        self.issued
            .saturating_add(lifetime * 4 / 5)
            .unwrap_or(self.expires)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(claims: &str) -> String {
        let encode = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        format!("{}.{}.sig", encode(r#"{"alg":"ES256"}"#), encode(claims))
    }

    #[test]
    fn renews_at_eighty_percent_of_the_lifetime() {
        let lifetime = TokenLifetime::of(&jwt(r#"{"iat":1000,"exp":2000}"#)).unwrap();
        assert_eq!(lifetime.renew_at(), Timestamp::from_second(1800).unwrap());
    }

    #[test]
    fn tokens_without_claims_have_no_lifetime() {
        assert_eq!(TokenLifetime::of("not-a-jwt"), None);
        assert_eq!(TokenLifetime::of(&jwt(r#"{"iat":1000}"#)), None);
    }
}
