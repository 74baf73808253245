//! Token minting, verification and TokenRequest rules pinned to the serviceaccount-token
//! recording.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use super::request::BoundObjectRef;
use super::*;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};

const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";
const NOW: i64 = 1_700_000_000;

fn issuer() -> TokenIssuer {
    TokenIssuer::generate(ISSUER).expect("key")
}

fn sa() -> ServiceAccountRef<'static> {
    ServiceAccountRef {
        namespace: "ns1",
        name: "sa1",
        uid: "11111111-2222-4333-8444-555555555555",
    }
}

fn spec(body: Value, issuer: &TokenIssuer) -> TokenRequestSpec {
    request::parse(&body, issuer.api_audiences()).expect("valid request")
}

fn payload(token: &str) -> Value {
    let part = token.split('.').nth(1).unwrap();
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
}

#[test]
fn default_request_gets_an_hour_and_the_api_audience() {
    let iss = issuer();
    let s = spec(
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}),
        &iss,
    );
    assert_eq!(s.expiration_seconds, 3600);
    assert_eq!(
        s.to_json(),
        json!({"audiences": [ISSUER], "expirationSeconds": 3600, "boundObjectRef": null})
    );
    let empty = spec(json!({}), &iss);
    assert_eq!(empty, s);
}

#[test]
fn claims_have_the_kubernetes_shape() {
    let iss = issuer();
    let t = iss
        .issue(
            &sa(),
            &spec(json!({"spec": {"expirationSeconds": 3600}}), &iss),
            None,
            NOW,
        )
        .unwrap();
    let claims = payload(&t.token);
    assert_eq!(claims, t.claims);
    assert_eq!(claims["aud"], json!([ISSUER]));
    assert_eq!(claims["exp"], NOW + 3600);
    assert_eq!(claims["iat"], NOW);
    assert_eq!(claims["nbf"], NOW);
    assert_eq!(claims["iss"], ISSUER);
    assert_eq!(claims["sub"], "system:serviceaccount:ns1:sa1");
    assert_eq!(
        claims["kubernetes.io"],
        json!({"namespace": "ns1", "serviceaccount": {"name": "sa1", "uid": "11111111-2222-4333-8444-555555555555"}})
    );
    let jti = claims["jti"].as_str().unwrap();
    assert_eq!(jti.len(), 36);
    assert_eq!(&jti[14..15], "4");
    assert_eq!(t.expiration_timestamp, "2023-11-14T23:13:20Z");
    let header: Value = serde_json::from_slice(
        &URL_SAFE_NO_PAD
            .decode(t.token.split('.').next().unwrap())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(header["alg"], "ES256");
    assert_eq!(iss.jwks()["keys"][0]["kid"], header["kid"]);
}

#[test]
fn a_token_verifies_into_the_service_account_identity() {
    let iss = issuer();
    let t = iss.issue(&sa(), &spec(json!({}), &iss), None, NOW).unwrap();
    let id = iss.verify(&t.token, &[], NOW + 10).unwrap();
    assert_eq!(id.username(), "system:serviceaccount:ns1:sa1");
    assert_eq!(id.audiences, vec![ISSUER.to_string()]);
    let jti = t.claims["jti"].as_str().unwrap();
    assert_eq!(
        id.user_info(),
        json!({
            "username": "system:serviceaccount:ns1:sa1",
            "uid": "11111111-2222-4333-8444-555555555555",
            "groups": ["system:serviceaccounts", "system:serviceaccounts:ns1", "system:authenticated"],
            "extra": {"authentication.kubernetes.io/credential-id": [format!("JTI={jti}")]}
        })
    );
}

#[test]
fn audiences_must_intersect() {
    let iss = issuer();
    let t = iss
        .issue(
            &sa(),
            &spec(
                json!({"spec": {"audiences": ["aud-one"], "expirationSeconds": 600}}),
                &iss,
            ),
            None,
            NOW,
        )
        .unwrap();
    assert_eq!(t.claims["aud"], json!(["aud-one"]));
    let err = iss.verify(&t.token, &[], NOW).unwrap_err();
    assert!(matches!(err, TokenError::Audience { .. }));
    let ok = iss.verify(&t.token, &["aud-one".to_string()], NOW).unwrap();
    assert_eq!(ok.audiences, vec!["aud-one".to_string()]);
    let err = iss
        .verify(&t.token, &["aud-two".to_string()], NOW)
        .unwrap_err();
    assert_eq!(
        err.review_message(),
        "[invalid bearer token, token audiences [\"aud-one\"] is invalid for the target audiences [\"aud-two\"]]"
    );
}

#[test]
fn expiry_honours_a_minute_of_leeway() {
    let iss = issuer();
    let t = iss
        .issue(
            &sa(),
            &spec(json!({"spec": {"expirationSeconds": 600}}), &iss),
            None,
            NOW,
        )
        .unwrap();
    assert!(iss.verify(&t.token, &[], NOW + 600 + 60).is_ok());
    assert_eq!(
        iss.verify(&t.token, &[], NOW + 600 + 61).unwrap_err(),
        TokenError::Expired
    );
    assert_eq!(
        iss.verify(&t.token, &[], NOW - 61).unwrap_err(),
        TokenError::NotValidYet
    );
}

#[test]
fn garbage_and_foreign_tokens_are_invalid() {
    let iss = issuer();
    for garbage in ["garbage", "a.b.c", "a.b.c.d", "", "..", "e30.e30.AAAA"] {
        let err = iss.verify(garbage, &[], NOW).unwrap_err();
        assert_eq!(err, TokenError::Invalid, "{garbage}");
        assert_eq!(err.review_message(), "invalid bearer token");
    }
    let other = issuer();
    let t = other
        .issue(&sa(), &spec(json!({}), &other), None, NOW)
        .unwrap();
    assert_eq!(
        iss.verify(&t.token, &[], NOW).unwrap_err(),
        TokenError::Invalid
    );
    let mut tampered: Vec<&str> = t.token.split('.').collect();
    let forged = URL_SAFE_NO_PAD.encode(json!({"iss": ISSUER, "sub": "x"}).to_string());
    tampered[1] = &forged;
    assert_eq!(
        other.verify(&tampered.join("."), &[], NOW).unwrap_err(),
        TokenError::Invalid
    );
}

#[test]
fn issuers_with_the_same_key_verify_each_others_tokens() {
    let rng = SystemRandom::new();
    let key = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
    let iss = TokenIssuer::from_pkcs8(ISSUER, key.as_ref()).unwrap();
    let t = iss.issue(&sa(), &spec(json!({}), &iss), None, NOW).unwrap();
    let again = TokenIssuer::from_pkcs8(ISSUER, key.as_ref()).unwrap();
    assert!(again.verify(&t.token, &[], NOW).is_ok());
    assert!(TokenIssuer::from_pkcs8(ISSUER, b"not a key").is_err());
}

#[test]
fn bound_tokens_carry_the_object() {
    let iss = issuer();
    let s = spec(
        json!({"spec": {"boundObjectRef": {"kind": "Secret", "apiVersion": "v1", "name": "bound", "uid": "u-1"}}}),
        &iss,
    );
    assert_eq!(
        s.to_json()["boundObjectRef"],
        json!({"kind": "Secret", "apiVersion": "v1", "name": "bound", "uid": "u-1"})
    );
    let bound = BoundObject {
        kind: "Secret".into(),
        name: "bound".into(),
        uid: "u-1".into(),
    };
    let t = iss.issue(&sa(), &s, Some(&bound), NOW).unwrap();
    assert_eq!(
        t.claims["kubernetes.io"],
        json!({"namespace": "ns1", "secret": {"name": "bound", "uid": "u-1"},
               "serviceaccount": {"name": "sa1", "uid": "11111111-2222-4333-8444-555555555555"}})
    );
    let id = iss.verify(&t.token, &[], NOW).unwrap();
    assert_eq!(id.bound, Some(bound));
    let pod = BoundObject {
        kind: "Pod".into(),
        name: "p".into(),
        uid: "pu".into(),
    };
    let t = iss
        .issue(&sa(), &spec(json!({}), &iss), Some(&pod), NOW)
        .unwrap();
    let info = iss.verify(&t.token, &[], NOW).unwrap().user_info();
    assert_eq!(
        info["extra"]["authentication.kubernetes.io/pod-name"],
        json!(["p"])
    );
}

#[test]
fn request_errors_match_the_recording() {
    let err = request::parse(&json!({"spec": {"expirationSeconds": 599}}), &[]).unwrap_err();
    assert_eq!(
        err,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes",
               "reason": "Invalid",
               "details": {"group": "authentication.k8s.io", "kind": "TokenRequest",
                           "causes": [{"reason": "FieldValueInvalid", "message": "Invalid value: 599: may not specify a duration less than 10 minutes", "field": "spec.expirationSeconds"}]},
               "code": 422})
    );
    let err = request::parse(
        &json!({"spec": {"expirationSeconds": (1i64 << 32) + 1}}),
        &[],
    )
    .unwrap_err();
    assert_eq!(err["code"], 422);
    let err = request::parse(&json!({"spec": {"boundObjectRef": {"kind": "ConfigMap", "apiVersion": "v1", "name": "x"}}}), &[]).unwrap_err();
    assert_eq!(
        err,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "cannot bind token to object of type /v1, Kind=ConfigMap", "reason": "BadRequest", "code": 400})
    );
    let conflict = request::bound_uid_conflict(&BoundObjectRef {
        kind: "Secret".into(),
        api_version: "v1".into(),
        name: "bound".into(),
        uid: "00000000-0000-0000-0000-000000000000".into(),
    });
    assert_eq!(
        conflict["message"],
        "Operation cannot be fulfilled on Secret \"bound\": the UID in the bound object reference (00000000-0000-0000-0000-000000000000) does not match the UID in record. The object might have been deleted and then recreated"
    );
    assert_eq!(
        conflict["details"],
        json!({"name": "bound", "kind": "Secret"})
    );
}

#[test]
fn legacy_tokens_never_expire_and_name_their_secret() {
    let iss = issuer();
    let token = iss.issue_legacy(&sa(), "sa1-token").unwrap();
    let claims = payload(&token);
    assert_eq!(claims["iss"], "kubernetes/serviceaccount");
    assert_eq!(
        claims["kubernetes.io/serviceaccount/secret.name"],
        "sa1-token"
    );
    let id = iss.verify(&token, &[], NOW + 10 * 365 * 86_400).unwrap();
    assert_eq!(id.legacy_secret.as_deref(), Some("sa1-token"));
    assert_eq!(id.username(), "system:serviceaccount:ns1:sa1");
    assert!(id.user_info().get("extra").is_none());
    assert!(iss.verify(&token, &["other".to_string()], NOW).is_err());
}

#[test]
fn discovery_documents_describe_the_key() {
    let iss = issuer();
    let jwks = iss.jwks();
    let key = &jwks["keys"][0];
    assert_eq!(key["kty"], "EC");
    assert_eq!(
        URL_SAFE_NO_PAD
            .decode(key["x"].as_str().unwrap())
            .unwrap()
            .len(),
        32
    );
    assert_eq!(
        URL_SAFE_NO_PAD
            .decode(key["y"].as_str().unwrap())
            .unwrap()
            .len(),
        32
    );
    assert_eq!(
        iss.openid_configuration()["jwks_uri"],
        format!("{ISSUER}/openid/v1/jwks")
    );
}
