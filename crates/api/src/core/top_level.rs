//! Kinds whose fields sit next to `metadata` instead of under `spec`/`status`.
//!
//! kube's derive only knows the spec/status layout, so these kinds implement
//! [`kube::Resource`] through this macro.

/// Implements [`kube::Resource`] for a namespaced core kind with top-level fields.
macro_rules! top_level_kind {
    ($type:ident, kind = $kind:literal, plural = $plural:literal) => {
        impl kube::Resource for $type {
            type DynamicType = ();
            type Scope = kube::core::NamespaceResourceScope;

            fn kind(_: &()) -> std::borrow::Cow<'_, str> {
                $kind.into()
            }

            fn group(_: &()) -> std::borrow::Cow<'_, str> {
                crate::constants::GROUP.into()
            }

            fn version(_: &()) -> std::borrow::Cow<'_, str> {
                crate::constants::VERSION.into()
            }

            fn plural(_: &()) -> std::borrow::Cow<'_, str> {
                $plural.into()
            }

            fn meta(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &self.metadata
            }

            fn meta_mut(
                &mut self,
            ) -> &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &mut self.metadata
            }
        }
    };
}

pub(crate) use top_level_kind;

/// The schema of `metadata` in a CRD: the API server owns its structure.
pub(crate) fn object_meta_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "object" })
}

/// The schema of `apiVersion` and `kind`: a string, without the serde default.
pub(crate) fn plain_string(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string" })
}

/// The `apiVersion` every core kind is written with.
pub(crate) fn core_api_version() -> String {
    crate::constants::API_VERSION.to_owned()
}
