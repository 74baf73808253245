//! The kubeconfig template functions of GoTemplate and Spiff executions:
//! `getServiceAccountKubeconfig`, `getShootAdminKubeconfig` (each also
//! `…WithExpirationTimestamp`) and `getOidcKubeconfig`. Their arguments and messages are
//! upstream's; the clusters are reached through a [`TargetResolver`] the caller supplies.

pub mod resolver;
mod shape;

pub use resolver::{BoxFuture, CredentialRequest, InlineOnly, Issued, TargetResolver};

use landscaper_api::core::Target;
use serde_json::{Value as Json, json};

use resolver::target_name;

/// One of the kubeconfig functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Function {
    /// `getShootAdminKubeconfig`.
    ShootAdmin,
    /// `getShootAdminKubeconfigWithExpirationTimestamp`.
    ShootAdminWithExpiration,
    /// `getServiceAccountKubeconfig`.
    ServiceAccount,
    /// `getServiceAccountKubeconfigWithExpirationTimestamp`.
    ServiceAccountWithExpiration,
    /// `getOidcKubeconfig`.
    Oidc,
}

impl Function {
    /// Every kubeconfig function.
    pub const ALL: [Function; 5] = [
        Self::ShootAdmin,
        Self::ShootAdminWithExpiration,
        Self::ServiceAccount,
        Self::ServiceAccountWithExpiration,
        Self::Oidc,
    ];

    /// The name templates call it by.
    pub fn name(self) -> &'static str {
        match self {
            Self::ShootAdmin => "getShootAdminKubeconfig",
            Self::ShootAdminWithExpiration => "getShootAdminKubeconfigWithExpirationTimestamp",
            Self::ServiceAccount => "getServiceAccountKubeconfig",
            Self::ServiceAccountWithExpiration => {
                "getServiceAccountKubeconfigWithExpirationTimestamp"
            }
            Self::Oidc => "getOidcKubeconfig",
        }
    }

    /// The name upstream's argument errors use (the ServiceAccount functions say
    /// `getServiceAccountToken`, the timestamp variants their base function's name).
    fn argument_name(self) -> &'static str {
        match self {
            Self::ShootAdmin | Self::ShootAdminWithExpiration => "getShootAdminKubeconfig",
            Self::ServiceAccount | Self::ServiceAccountWithExpiration => "getServiceAccountToken",
            Self::Oidc => "getOidcKubeconfig",
        }
    }

    fn with_expiration(self) -> bool {
        matches!(
            self,
            Self::ShootAdminWithExpiration | Self::ServiceAccountWithExpiration
        )
    }
}

/// An argument as a template passed it: its JSON value and its Go type name (what `%T`
/// prints), which upstream's messages show.
#[derive(Clone, Debug)]
pub struct Argument {
    /// The value.
    pub value: Json,
    /// Its Go type, e.g. `string`, `int`, `float64`, `map[string]interface {}`.
    pub go_type: String,
}

impl Argument {
    /// A Spiff argument: spiff's numbers are `int64` or `float64`.
    pub fn spiff(value: &Json) -> Self {
        let go_type = match value {
            Json::Null => "<nil>",
            Json::Bool(_) => "bool",
            Json::Number(n) if n.is_f64() => "float64",
            Json::Number(_) => "int64",
            Json::String(_) => "string",
            Json::Array(_) => "[]interface {}",
            Json::Object(_) => "map[string]interface {}",
        };
        Self {
            value: value.clone(),
            go_type: go_type.into(),
        }
    }
}

/// Calls `function` with `args`; the result is a base64 kubeconfig string, or for the
/// timestamp variants the map `{kubeconfig, expirationTimestamp, expirationTimestampReadable}`.
/// Errors name the function and, past the arguments, the Target and the cause.
pub fn call(
    resolver: &dyn TargetResolver,
    function: Function,
    args: &[Argument],
) -> Result<Json, String> {
    let name = function.argument_name();
    if function == Function::Oidc {
        let [issuer, client, target] = args else {
            return Err(format!(
                "templating function {name} expects 3 arguments: issuer url, client id, and target"
            ));
        };
        let issuer = string(issuer, name, "1st", "the issuer url")?;
        let client = string(client, name, "2nd", "the client id")?;
        let target = target_argument(target, name, "3rd")?;
        let failed = failure(function, &target);
        let kubeconfig = crate::blocking::block_on(resolver.kubeconfig(&target))
            .and_then(|r| r)
            .map_err(|e| failed(format!("could not resolve target: {e}")))?;
        let text = shape::with_oidc_login(&kubeconfig, issuer, client).map_err(&failed)?;
        return Ok(Json::String(shape::base64(&text)));
    }
    let (what, usage) = match function {
        Function::ShootAdmin | Function::ShootAdminWithExpiration => (
            "the shoot",
            "shoot name, shoot namespace, expiration seconds, and target for garden project ",
        ),
        _ => (
            "the service account",
            "service account name, service account namespace, expiration seconds, and target",
        ),
    };
    let [object, namespace, expiration, target] = args else {
        return Err(format!(
            "templating function {name} expects 4 arguments: {usage}"
        ));
    };
    let object = string(object, name, "1st", &format!("{what} name"))?;
    let namespace = string(namespace, name, "2nd", &format!("{what} namespace"))?;
    let expiration_seconds = int64(expiration).map_err(|e| {
        format!(
            "templating function {name} expects an integer as 3rd argument, namely the expiration seconds: {e}"
        )
    })?;
    let target = target_argument(target, name, "4th")?;
    let failed = failure(function, &target);
    let kubeconfig = crate::blocking::block_on(resolver.kubeconfig(&target))
        .and_then(|r| r)
        .map_err(|e| failed(format!("could not resolve target: {e}")))?;
    let request = CredentialRequest {
        kubeconfig: &kubeconfig,
        namespace,
        name: object,
        expiration_seconds,
    };
    let (encoded, expiration) = match function {
        Function::ShootAdmin | Function::ShootAdminWithExpiration => {
            let issued = crate::blocking::block_on(resolver.shoot_admin_kubeconfig(request))
                .and_then(|r| r)
                .map_err(|e| failed(format!("admin kubeconfig request failed: {e}")))?;
            (issued.value, issued.expiration)
        }
        _ => {
            let issued = crate::blocking::block_on(resolver.service_account_token(request))
                .and_then(|r| r)
                .map_err(|e| failed(format!("token request failed: {e}")))?;
            let text = shape::with_token(&kubeconfig, object, &issued.value).map_err(&failed)?;
            (shape::base64(&text), issued.expiration)
        }
    };
    if !function.with_expiration() {
        return Ok(Json::String(encoded));
    }
    Ok(json!({
        "kubeconfig": encoded,
        "expirationTimestamp": expiration.as_second(),
        "expirationTimestampReadable": expiration.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
    }))
}

/// How a failure past the arguments reads: the function, the Target, the cause.
fn failure(function: Function, target: &Target) -> impl Fn(String) -> String {
    let prefix = format!(
        "templating function {}: Target {}",
        function.name(),
        target_name(target)
    );
    move |cause| format!("{prefix}: {cause}")
}

fn string<'a>(
    arg: &'a Argument,
    function: &str,
    position: &str,
    what: &str,
) -> Result<&'a str, String> {
    arg.value.as_str().ok_or_else(|| {
        format!(
            "templating function {function} expects a string as {position} argument, namely {what}"
        )
    })
}

/// An integer or float argument as `int64`, as upstream's `toInt64` converts it.
fn int64(arg: &Argument) -> Result<i64, String> {
    match &arg.value {
        Json::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f as i64))
            .ok_or_else(|| format!("unsupported type {}", arg.go_type)),
        _ => Err(format!("unsupported type {}", arg.go_type)),
    }
}

/// A Target argument: any value that reads as a Target through JSON (a Target map from
/// `.imports` does).
fn target_argument(arg: &Argument, function: &str, position: &str) -> Result<Target, String> {
    serde_json::from_value(arg.value.clone()).map_err(|e| {
        format!(
            "templating function {function} expects a target object as {position} argument: error during unmarshaling: {e}"
        )
    })
}

#[cfg(test)]
mod tests;
