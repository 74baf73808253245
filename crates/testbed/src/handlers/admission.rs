//! Admission checks that need the requester: RBAC escalation prevention on roles and
//! bindings.

use super::Ctx;
use crate::status::ApiError;
use serde_json::Value;

/// Refuses a write of a role or binding that grants more than the requester holds.
pub fn check(ctx: &Ctx<'_>, obj: &Value) -> Result<(), ApiError> {
    if ctx.res.group != "rbac.authorization.k8s.io" || ctx.user.is_superuser() {
        return Ok(());
    }
    let policy = ctx.cluster.policy.read().unwrap_or_else(|e| e.into_inner());
    let user = ctx.user.to_rbac();
    let result = match ctx.res.kind.as_str() {
        "Role" | "ClusterRole" => policy.check_role_write(&user, obj),
        "RoleBinding" | "ClusterRoleBinding" => policy.check_binding_write(&user, obj),
        _ => Ok(()),
    };
    result.map_err(|e| ApiError::from_status(&e.status))
}
