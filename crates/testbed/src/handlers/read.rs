//! get and list.

use super::metadata;
use super::negotiate::Output;
use super::options::{ListOptions, ReadAt, encode_continue, parse_rv_param};
use super::render::{ListMeta, list_json, object_json};
use super::{Ctx, Filter};
use crate::server::reply::Reply;
use crate::status::ApiError;
use crate::store::Stored;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// How long a list waits for a future resourceVersion before 504, like kube-apiserver.
const FUTURE_RV_WAIT: Duration = Duration::from_secs(3);

/// GET of one object (or its status).
pub fn get(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    if let Some(rv) = ctx.req.param("resourceVersion").filter(|s| !s.is_empty()) {
        parse_rv_param(rv)?;
    }
    let obj = ctx
        .cluster
        .store
        .get(ctx.key(), ctx.ns(), ctx.name())
        .ok_or_else(|| ctx.not_found())?;
    let res = &ctx.res;
    match ctx.accept.output {
        Output::Object => Ok(Reply::raw(200, object_json(res, &obj))),
        Output::Table => {
            let now = ctx.cluster.clock.now_nanos();
            let t = super::table::table(res, std::slice::from_ref(&obj), obj.rv, now);
            Ok(Reply::json(200, &t))
        }
        Output::Metadata(version) => Ok(Reply::raw(200, metadata::object(&obj, version))),
        Output::MetadataList(_) => Err(metadata::refuse_object(res, &res.group, &res.kind)),
    }
}

/// LIST of a resource in a namespace or everywhere.
pub async fn list(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let opts = ListOptions::from_request(ctx.req)?;
    let filter = Filter::from_request(ctx.req, &ctx.res)?;
    let ns = ctx.path.namespace.as_deref();
    let store = &ctx.cluster.store;
    let (items, rv) = match opts.at {
        ReadAt::Exact(rv) => {
            let items = store.list_at(ctx.key(), ns, opts.after.as_ref(), rv).map_err(|_| {
                if opts.after.is_some() {
                    ApiError::expired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
                } else {
                    ApiError::expired("The resourceVersion for the provided list is too old.")
                }
            })?;
            (items, rv)
        }
        ReadAt::NotOlderThan(rv) => {
            wait_for_rv(ctx, rv).await?;
            store.list(ctx.key(), ns, None)
        }
        ReadAt::Latest | ReadAt::Any => store.list(ctx.key(), ns, None),
    };
    let selected: Vec<Arc<Stored>> = if filter.is_everything() {
        items
    } else {
        items.into_iter().filter(|o| filter.matches(o)).collect()
    };
    let mut meta = ListMeta {
        rv,
        ..ListMeta::default()
    };
    let page = if opts.limit > 0 && selected.len() > opts.limit {
        let last = &selected[opts.limit - 1];
        meta.continue_token = Some(encode_continue(
            rv,
            &(last.namespace.clone(), last.name.clone()),
        ));
        if filter.is_everything() {
            meta.remaining = Some(selected.len() - opts.limit);
        }
        &selected[..opts.limit]
    } else {
        &selected[..]
    };
    let res = &ctx.res;
    match ctx.accept.output {
        Output::Object => Ok(Reply::raw(200, list_json(res, page, &meta))),
        Output::Table => {
            let now = ctx.cluster.clock.now_nanos();
            let mut t = super::table::table(res, page, rv, now);
            if let (Some(token), Some(m)) = (
                &meta.continue_token,
                t.get_mut("metadata")
                    .and_then(serde_json::Value::as_object_mut),
            ) {
                m.insert("continue".into(), token.clone().into());
            }
            Ok(Reply::json(200, &t))
        }
        Output::Metadata(_) => Err(metadata::refuse_list(
            res,
            &res.group,
            &format!("{}List", res.kind),
        )),
        Output::MetadataList(version) => Ok(Reply::raw(200, metadata::list(page, &meta, version))),
    }
}

async fn wait_for_rv(ctx: &Ctx<'_>, rv: u64) -> Result<(), ApiError> {
    let store = &ctx.cluster.store;
    if store.current_rv() >= rv {
        return Ok(());
    }
    let mut events = store.subscribe();
    let deadline = tokio::time::Instant::now() + FUTURE_RV_WAIT;
    while store.current_rv() < rv {
        if tokio::time::timeout_at(deadline, events.recv())
            .await
            .is_err()
        {
            let mut e = ApiError::new(
                504,
                "Timeout",
                format!(
                    "Timeout: Too large resource version: {rv}, current: {}",
                    store.current_rv()
                ),
            );
            if let Some(d) = e.details.as_mut() {
                d.insert("causes".into(), json!([{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]));
                d.insert("retryAfterSeconds".into(), 1.into());
            }
            return Err(e);
        }
    }
    Ok(())
}
