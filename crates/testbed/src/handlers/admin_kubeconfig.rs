//! `shoots/<name>/adminkubeconfig`: Gardener's `AdminKubeconfigRequest`, answered by the
//! test double of [`crate::gardener`].

use super::Ctx;
use crate::clock;
use crate::gardener::{
    self, DEFAULT_EXPIRATION_SECONDS, KUBE_APISERVER_ADDRESSES, MAX_EXPIRATION_SECONDS,
    MIN_EXPIRATION_SECONDS,
};
use crate::objects::decode::parse_request_body;
use crate::server::reply::Reply;
use crate::status::{ApiError, Cause};
use crate::users::{MASTERS, UserInfo};
use base64::Engine as _;
use serde_json::{Value, json};

const KIND: &str = "AdminKubeconfigRequest";

/// POST of an AdminKubeconfigRequest.
pub fn create(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let body = parse_request_body(ctx.req, KIND)?;
    let api_version = format!(
        "{}/{}",
        gardener::AUTHENTICATION_GROUP,
        gardener::AUTHENTICATION_VERSION
    );
    check_type(&body, &api_version)?;
    let expiration = requested_expiration(&body)?;
    let shoot = ctx
        .cluster
        .store
        .get(ctx.key(), ctx.ns(), ctx.name())
        .ok_or_else(|| ctx.not_found())?
        .value();
    let addresses: Vec<&Value> = shoot["status"]["advertisedAddresses"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter(|a| {
                    a["name"]
                        .as_str()
                        .is_some_and(|n| KUBE_APISERVER_ADDRESSES.contains(&n))
                })
                .collect()
        })
        .unwrap_or_default();
    let Some(address) = addresses.first() else {
        return Err(ApiError::invalid(
            KIND,
            gardener::AUTHENTICATION_GROUP,
            ctx.name(),
            vec![Cause::new(
                "FieldValueInvalid",
                format!(
                    "Invalid value: {}: no suitable advertised address for kube-apiserver found in .status.advertisedAddresses",
                    shoot["status"]["advertisedAddresses"]
                ),
                "status.status",
            )],
        ));
    };
    let url = address["url"].as_str().unwrap_or_default();
    let host_port = url
        .strip_prefix("https://")
        .map(|rest| rest.trim_end_matches('/'))
        .unwrap_or_default();
    let garden = ctx.cluster.gardener.get().ok_or_else(|| {
        ApiError::internal_error("the testbed was started without Gardener shoots")
    })?;
    let shoot_cluster = garden.cluster_at(host_port).ok_or_else(|| {
        ApiError::internal_error(format!(
            "the advertised address {url} of Shoot {}/{} is no cluster of this testbed",
            ctx.ns(),
            ctx.name()
        ))
    })?;
    let user = UserInfo::new(
        &format!("gardener.cloud:admin:{}", ctx.user.name),
        &[MASTERS],
    );
    let token = shoot_cluster.tokens.issue(user);
    let auth_name = format!("{}--{}", ctx.ns(), ctx.name());
    let cluster_name = format!(
        "{auth_name}-{}",
        address["name"].as_str().unwrap_or_default()
    );
    let kubeconfig = crate::kubeconfig::render(&cluster_name, url, &shoot_cluster.ca_pem, &token);
    let expires = clock::unix_now().0 + expiration;
    let answer = json!({
        "kind": KIND,
        "apiVersion": api_version,
        "metadata": {"name": ctx.name(), "namespace": ctx.ns(), "creationTimestamp": null},
        "spec": {"expirationSeconds": expiration},
        "status": {
            "kubeconfig": base64::engine::general_purpose::STANDARD.encode(kubeconfig),
            "expirationTimestamp": clock::format_time(expires),
        },
    });
    Ok(Reply::json(201, &answer))
}

/// A body that names a type must name `AdminKubeconfigRequest` of its group and version.
fn check_type(body: &Value, api_version: &str) -> Result<(), ApiError> {
    let kind = body["kind"].as_str().unwrap_or_default();
    let version = body["apiVersion"].as_str().unwrap_or_default();
    if (!kind.is_empty() && kind != KIND) || (!version.is_empty() && version != api_version) {
        return Err(ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {KIND}): {kind} in version {version:?} is not {api_version}"
        )));
    }
    Ok(())
}

/// `spec.expirationSeconds`, defaulted and capped as gardener-apiserver does; a value of
/// the wrong type is a decoding error, one below 10 minutes is invalid.
fn requested_expiration(body: &Value) -> Result<i64, ApiError> {
    let seconds = match &body["spec"]["expirationSeconds"] {
        Value::Null => 0,
        Value::Number(n) if n.is_i64() => n.as_i64().unwrap_or_default(),
        other => {
            return Err(ApiError::bad_request(format!(
                "{KIND} in version \"{}\" cannot be handled as a {KIND}: json: cannot unmarshal {} into Go struct field AdminKubeconfigRequestSpec.spec.expirationSeconds of type int64",
                gardener::AUTHENTICATION_VERSION,
                go_json_type(other)
            )));
        }
    };
    let seconds = if seconds == 0 {
        DEFAULT_EXPIRATION_SECONDS
    } else {
        seconds
    };
    if seconds < MIN_EXPIRATION_SECONDS {
        return Err(ApiError::invalid(
            KIND,
            gardener::AUTHENTICATION_GROUP,
            "",
            vec![Cause::new(
                "FieldValueInvalid",
                format!(
                    "Invalid value: {seconds}: may not specify a duration less than 10 minutes"
                ),
                "spec.expirationSeconds",
            )],
        ));
    }
    if seconds > i64::from(u32::MAX) {
        return Err(ApiError::invalid(
            KIND,
            gardener::AUTHENTICATION_GROUP,
            "",
            vec![Cause::new(
                "FieldValueTooLong",
                format!("Too long: may not be more than {} bytes", u32::MAX),
                "spec.expirationSeconds",
            )],
        ));
    }
    Ok(seconds.min(MAX_EXPIRATION_SECONDS))
}

/// How Go's JSON decoder names a value it cannot put in an integer.
fn go_json_type(value: &Value) -> &'static str {
    match value {
        Value::String(_) => "string",
        Value::Bool(_) => "bool",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Number(_) => "number",
        Value::Null => "null",
    }
}
