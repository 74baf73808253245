//! Authenticating requests: static bearer tokens, ServiceAccount tokens (bound and legacy,
//! revoked with their ServiceAccount or bound object), and impersonation headers.

use crate::clock;
use crate::cluster::ClusterState;
use crate::rbac::{Attributes, ResourceRequest, forbidden_status};
use crate::server::Request;
use crate::server::reply::Reply;
use crate::status::ApiError;
use crate::token::{TokenError, TokenIdentity};
use crate::users::{AUTHENTICATED, UserInfo};
use serde_json::Value;

/// The annotation of a legacy token Secret naming its ServiceAccount's uid.
pub const SA_UID_ANNOTATION: &str = "kubernetes.io/service-account.uid";
/// The annotation of a legacy token Secret naming its ServiceAccount.
pub const SA_NAME_ANNOTATION: &str = "kubernetes.io/service-account.name";
/// The label kube-apiserver stamps on a legacy token Secret when its token is used.
pub const LAST_USED_LABEL: &str = "kubernetes.io/legacy-token-last-used";

/// The user a request's bearer token stands for; anonymous without a token.
pub fn authenticate(state: &ClusterState, req: &Request) -> Result<UserInfo, ApiError> {
    let Some(header) = req.header("authorization") else {
        return Ok(UserInfo::anonymous());
    };
    let token = header
        .split_once(' ')
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim())
        .ok_or_else(ApiError::unauthorized)?;
    if let Some(user) = state.tokens.lookup(token) {
        return Ok(user);
    }
    let (user, identity) =
        verify_service_account(state, token, &[]).map_err(|_| ApiError::unauthorized())?;
    if let Some(secret) = &identity.legacy_secret {
        mark_legacy_token_used(state, &identity.namespace, secret);
    }
    Ok(user)
}

/// Verifies a ServiceAccount token for `audiences` (the API's when empty) and checks that
/// the ServiceAccount, and the bound object or legacy Secret, still exist.
pub fn verify_service_account(
    state: &ClusterState,
    token: &str,
    audiences: &[String],
) -> Result<(UserInfo, TokenIdentity), TokenError> {
    let identity = state.issuer.verify(token, audiences, clock::unix_now().0)?;
    let store = &state.store;
    let sa = store
        .get(
            "/serviceaccounts",
            &identity.namespace,
            &identity.service_account,
        )
        .ok_or(TokenError::Invalid)?;
    if sa.uid != identity.service_account_uid || sa.deleting {
        return Err(TokenError::Invalid);
    }
    if let Some(bound) = &identity.bound {
        let key = match bound.kind.as_str() {
            "Secret" => "/secrets",
            "Pod" => "/pods",
            _ => return Err(TokenError::Invalid),
        };
        let obj = store
            .get(key, &identity.namespace, &bound.name)
            .ok_or(TokenError::Invalid)?;
        if obj.uid != bound.uid || obj.deleting {
            return Err(TokenError::Invalid);
        }
    }
    if let Some(secret) = &identity.legacy_secret {
        let obj = store
            .get("/secrets", &identity.namespace, secret)
            .ok_or(TokenError::Invalid)?;
        let value = obj.value();
        let uid = value
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(SA_UID_ANNOTATION))
            .and_then(Value::as_str);
        if uid != Some(sa.uid.as_str()) || obj.deleting {
            return Err(TokenError::Invalid);
        }
    }
    let info = identity.user_info();
    let mut user = UserInfo::new(&identity.username(), &[]);
    user.uid = identity.service_account_uid.clone();
    user.groups = identity.groups();
    if let Some(extra) = info.get("extra").and_then(Value::as_object) {
        for (k, v) in extra {
            let values = v
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            user.extra.insert(k.clone(), values);
        }
    }
    Ok((user, identity))
}

fn mark_legacy_token_used(state: &ClusterState, ns: &str, secret: &str) {
    let today = clock::now_time()[..10].to_string();
    let Some(obj) = state.store.get("/secrets", ns, secret) else {
        return;
    };
    if obj.label(LAST_USED_LABEL) == Some(today.as_str()) {
        return;
    }
    let Some(res) = state.stored_resource("/secrets") else {
        return;
    };
    let result = state.store.write(|txn| {
        let Some(current) = txn.get("/secrets", ns, secret) else {
            return Ok(());
        };
        let mut value = current.value();
        let meta = crate::objects::meta_mut(&mut value);
        let labels = meta
            .entry("labels")
            .or_insert_with(|| serde_json::json!({}));
        if let Some(l) = labels.as_object_mut() {
            l.insert(LAST_USED_LABEL.into(), today.clone().into());
        }
        crate::writes::apply_update(txn, &res, &current, value, None, false).map(|_| ())
    });
    if let Err(e) = result {
        tracing::warn!(namespace = ns, secret, error = %e.message, "marking legacy token as used");
    }
}

/// Applies `Impersonate-*` headers: the requester must be allowed to impersonate each.
pub fn impersonate(state: &ClusterState, req: &Request, user: UserInfo) -> Result<UserInfo, Reply> {
    let Some(target) = req.header("impersonate-user") else {
        if req.headers.contains_key("impersonate-group") {
            return Err(ApiError::internal(
                "requested [{Kind=Group}] without impersonating a user",
            )
            .into());
        }
        return Ok(user);
    };
    let target = target.to_string();
    let groups: Vec<String> = req
        .headers
        .get_all("impersonate-group")
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_string))
        .collect();
    let requester = user.to_rbac();
    let mut checks: Vec<ResourceRequest> = Vec::new();
    match target
        .strip_prefix("system:serviceaccount:")
        .and_then(|r| r.split_once(':'))
    {
        Some((ns, name)) => checks.push(ResourceRequest {
            resource: "serviceaccounts".into(),
            namespace: ns.into(),
            name: name.into(),
            api_version: "v1".into(),
            ..Default::default()
        }),
        None => checks.push(ResourceRequest {
            resource: "users".into(),
            name: target.clone(),
            api_version: "v1".into(),
            ..Default::default()
        }),
    }
    checks.extend(groups.iter().map(|g| ResourceRequest {
        resource: "groups".into(),
        name: g.clone(),
        api_version: "v1".into(),
        ..Default::default()
    }));
    let policy = state.policy.read().unwrap_or_else(|e| e.into_inner());
    for check in checks {
        let attrs = Attributes::resource(requester.clone(), "impersonate", check);
        let decision = policy.authorize(&attrs);
        if !decision.allowed() {
            return Err(Reply::status_value(&forbidden_status(
                &attrs,
                decision.reason(),
            )));
        }
    }
    let mut out = UserInfo::new(&target, &[]);
    out.groups = groups;
    if let Some((ns, _)) = target
        .strip_prefix("system:serviceaccount:")
        .and_then(|r| r.split_once(':'))
    {
        for g in [
            "system:serviceaccounts".to_string(),
            format!("system:serviceaccounts:{ns}"),
        ] {
            if !out.groups.contains(&g) {
                out.groups.push(g);
            }
        }
    }
    if target != "system:anonymous" && !out.groups.iter().any(|g| g == AUTHENTICATED) {
        out.groups.push(AUTHENTICATED.into());
    }
    Ok(out)
}
