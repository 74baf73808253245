//! The token controller: fills `kubernetes.io/service-account-token` Secrets with a legacy
//! token, and deletes such Secrets when their ServiceAccount is missing or deleted.

use crate::authn::{SA_NAME_ANNOTATION, SA_UID_ANNOTATION};
use crate::cluster::ClusterState;
use crate::objects::meta_mut;
use crate::status::ApiError;
use crate::store::{Event, EventType, Stored};
use crate::token::ServiceAccountRef;
use crate::writes::{DeleteOptions, apply_update, delete_in_txn};
use base64::Engine as _;
use serde_json::{Value, json};
use std::sync::Arc;

const SECRETS: &str = "/secrets";
const SERVICE_ACCOUNTS: &str = "/serviceaccounts";
const TOKEN_TYPE: &str = "kubernetes.io/service-account-token";

/// Reacts to a change (or resynchronizes all token Secrets when `ev` is `None`).
pub async fn handle(state: Arc<ClusterState>, ev: Option<Arc<Event>>) {
    let Some(ev) = ev else {
        for secret in state.store.list(SECRETS, None, None).0 {
            reconcile_secret(&state, &secret);
        }
        return;
    };
    match (&*ev.storage_key, ev.kind) {
        (SECRETS, EventType::Added | EventType::Modified) => reconcile_secret(&state, &ev.object),
        (SERVICE_ACCOUNTS, EventType::Deleted) => {
            let (secrets, _) = state.store.list(SECRETS, Some(&ev.object.namespace), None);
            for secret in secrets {
                reconcile_secret(&state, &secret);
            }
        }
        _ => {}
    }
}

fn annotation<'a>(value: &'a Value, key: &str) -> &'a str {
    value
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn reconcile_secret(state: &ClusterState, secret: &Arc<Stored>) {
    if secret.deleting {
        return;
    }
    let value = secret.value();
    if value.get("type").and_then(Value::as_str) != Some(TOKEN_TYPE) {
        return;
    }
    let Some(res) = state.stored_resource(SECRETS) else {
        return;
    };
    let sa_name = annotation(&value, SA_NAME_ANNOTATION).to_string();
    let sa_uid = annotation(&value, SA_UID_ANNOTATION).to_string();
    let result = state.store.write(|txn| {
        let Some(current) = txn.get(SECRETS, &secret.namespace, &secret.name).filter(|c| c.rv == secret.rv) else {
            return Ok::<_, ApiError>(());
        };
        let sa = txn.get(SERVICE_ACCOUNTS, &secret.namespace, &sa_name);
        let Some(sa) = sa.filter(|sa| !sa.deleting && (sa_uid.is_empty() || sa.uid == sa_uid)) else {
            tracing::debug!(namespace = %secret.namespace, secret = %secret.name, "deleting token Secret of a missing ServiceAccount");
            delete_in_txn(txn, &res, &secret.namespace, &secret.name, &DeleteOptions::default())?;
            return Ok(());
        };
        if value.pointer("/data/token").is_some() {
            return Ok(());
        }
        let sa_ref = ServiceAccountRef { namespace: &secret.namespace, name: &sa_name, uid: &sa.uid };
        let token = state.issuer.issue_legacy(&sa_ref, &secret.name).map_err(|e| ApiError::internal_error(e.to_string()))?;
        let b64 = |s: &str| Value::String(base64::engine::general_purpose::STANDARD.encode(s));
        let mut next = value.clone();
        let meta = meta_mut(&mut next);
        let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
        if let Some(a) = annotations.as_object_mut() {
            a.insert(SA_UID_ANNOTATION.into(), sa.uid.clone().into());
        }
        if let Some(m) = next.as_object_mut() {
            let data = m.entry("data").or_insert_with(|| json!({}));
            if let Some(d) = data.as_object_mut() {
                d.insert("token".into(), b64(&token));
                d.insert("ca.crt".into(), b64(&state.ca_pem));
                d.insert("namespace".into(), b64(&secret.namespace));
            }
        }
        apply_update(txn, &res, &current, next, None, false).map(|_| ())
    });
    if let Err(e) = result {
        tracing::warn!(namespace = %secret.namespace, secret = %secret.name, error = %e.message, "token controller");
    }
}
