//! Request handlers: routing a resource request to get/list/watch/create/update/patch/
//! delete, and the discovery documents.

mod admin_kubeconfig;
mod admission;
mod aggregated;
mod delete;
mod discovery;
mod fields;
mod filter;
mod metadata;
mod negotiate;
mod options;
mod patch;
mod read;
mod render;
mod review;
mod scale;
mod table;
mod token_request;
mod watch;
mod write;

pub use filter::Filter;

use crate::cluster::ClusterState;
use crate::resources::ResourceDef;
use crate::server::Request;
use crate::server::path::{ResourcePath, Route};
use crate::server::reply::Reply;
use crate::status::ApiError;
use crate::users::UserInfo;
use http::Method;
use std::sync::Arc;

/// One resource request with everything its handler needs.
pub struct Ctx<'a> {
    /// The cluster.
    pub cluster: &'a Arc<ClusterState>,
    /// The request.
    pub req: &'a Request,
    /// Who sent it.
    pub user: &'a UserInfo,
    /// The resource addressed.
    pub res: Arc<ResourceDef>,
    /// The parsed path.
    pub path: ResourcePath,
    /// The answer's form, negotiated from `Accept`.
    pub accept: negotiate::Negotiated,
}

impl Ctx<'_> {
    /// The namespace of the path ("" when none).
    pub fn ns(&self) -> &str {
        self.path.namespace.as_deref().unwrap_or_default()
    }

    /// The object name of the path ("" when none).
    pub fn name(&self) -> &str {
        self.path.name.as_deref().unwrap_or_default()
    }

    /// The resource's storage key.
    pub fn key(&self) -> &str {
        &self.res.storage_key
    }

    /// 404 for the named object.
    pub fn not_found(&self) -> ApiError {
        ApiError::not_found(&self.res.plural, &self.res.group, self.name())
    }

    /// Whether the request is a dry run (`dryRun=All`).
    pub fn dry_run(&self) -> bool {
        self.req.param("dryRun") == Some("All")
    }
}

/// Routes a request that passed authentication and authorization.
pub async fn dispatch(
    cluster: &Arc<ClusterState>,
    req: &Request,
    user: &UserInfo,
    route: Route,
) -> Reply {
    match route {
        Route::Version => discovery::version(),
        Route::Health => Reply::Text(200, "ok"),
        Route::Api if aggregated::wanted(req) => aggregated::document(cluster, true),
        Route::Apis if aggregated::wanted(req) => aggregated::document(cluster, false),
        Route::Api => discovery::api(cluster),
        Route::Apis => discovery::apis(cluster),
        Route::Group(g) => discovery::group(cluster, &g),
        Route::GroupVersion(g, v) => discovery::group_version(cluster, &g, &v),
        Route::OpenApi(rest) => discovery::openapi(cluster, &rest),
        Route::OpenIdConfiguration => Reply::json(200, &cluster.issuer.openid_configuration()),
        Route::Jwks => Reply::json(200, &cluster.issuer.jwks()),
        Route::Unknown => Reply::Text(404, "404 page not found\n"),
        Route::Resource(path) => match resolve(cluster, path) {
            Ok((res, path)) => {
                resource(Ctx {
                    cluster,
                    req,
                    user,
                    res,
                    path,
                    accept: negotiate::Negotiated::DEFAULT,
                })
                .await
            }
            Err(reply) => reply,
        },
    }
}

fn resolve(
    cluster: &ClusterState,
    path: ResourcePath,
) -> Result<(Arc<ResourceDef>, ResourcePath), Reply> {
    if !cluster.registry.serves(&path.group, &path.version) {
        return Err(Reply::Text(404, "404 page not found\n"));
    }
    let Some(res) = cluster
        .registry
        .find(&path.group, &path.version, &path.plural)
    else {
        return Err(ApiError::no_resource().into());
    };
    if !res.namespaced && path.namespace.is_some() {
        return Err(Reply::Text(404, "404 page not found\n"));
    }
    if let Some(sub) = &path.subresource
        && !res.has_subresource(sub)
    {
        return Err(match &path.name {
            Some(name) => ApiError::not_found(&res.plural, &res.group, name),
            None => ApiError::no_resource(),
        }
        .into());
    }
    Ok((res, path))
}

async fn resource(ctx: Ctx<'_>) -> Reply {
    let named = ctx.path.name.is_some();
    let sub = ctx.path.subresource.clone();
    let method = ctx.req.method.clone();
    let verb = match (&method, named) {
        (&Method::GET, true) => "get",
        (&Method::GET, false) if matches!(ctx.req.param("watch"), Some("1" | "true")) => "watch",
        (&Method::GET, false) => "list",
        (&Method::POST, _) => "create",
        (&Method::PUT, true) => "update",
        (&Method::PATCH, true) => "patch",
        (&Method::DELETE, true) => "delete",
        (&Method::DELETE, false) => "deletecollection",
        _ => {
            return ApiError::method_not_supported(
                &ctx.res.plural,
                &ctx.res.group,
                method.as_str(),
            )
            .into();
        }
    };
    let allowed = match &sub {
        Some(s) => ctx
            .res
            .subresources
            .iter()
            .any(|x| &x.name == s && x.verbs.iter().any(|v| v == verb)),
        None => ctx.res.supports(verb) && (verb != "create" || !named),
    };
    if !allowed {
        return ApiError::method_not_supported(&ctx.res.plural, &ctx.res.group, verb).into();
    }
    // Every verb negotiates its answer's form before it does anything, like kube-apiserver's.
    let ctx = match negotiate::negotiate(ctx.req, &ctx.res) {
        Ok(accept) => Ctx { accept, ..ctx },
        Err(e) => return e.into(),
    };
    let result = match (verb, sub.as_deref()) {
        ("get", None | Some("status")) => read::get(&ctx),
        ("list", _) => read::list(&ctx).await,
        ("watch", _) => watch::watch(&ctx).await,
        ("create", None) if !ctx.res.is_stored() => review::create(&ctx),
        ("create", None) => write::create(&ctx),
        ("create", Some("token")) => token_request::create(&ctx),
        ("create", Some(crate::gardener::ADMIN_KUBECONFIG)) => admin_kubeconfig::create(&ctx),
        ("update", None | Some("status")) => write::update(&ctx),
        ("patch", None | Some("status")) => patch::patch(&ctx),
        ("get", Some("scale")) => scale::get(&ctx),
        ("update" | "patch", Some("scale")) => scale::write(&ctx),
        ("delete", None) => delete::delete(&ctx),
        ("deletecollection", _) => delete::delete_collection(&ctx),
        _ => Err(ApiError::method_not_supported(
            &ctx.res.plural,
            &ctx.res.group,
            verb,
        )),
    };
    // get, list and watch answer in the negotiated form themselves (from the stored objects);
    // the others' answers are reduced here.
    let reduced = match (verb, sub.as_deref()) {
        ("get", None | Some("status")) | ("list", _) | ("watch", _) => result,
        _ => result.and_then(|r| metadata::reply(r, ctx.accept.output, &ctx.res)),
    };
    reduced.unwrap_or_else(Reply::from)
}
