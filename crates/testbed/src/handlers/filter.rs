//! Label and field selection of stored objects for list, watch and deletecollection.

use crate::resources::ResourceDef;
use crate::selector::{FieldSchema, FieldSelector, LabelSelector};
use crate::server::Request;
use crate::status::ApiError;
use crate::store::Stored;
use serde_json::{Map, Value, json};

/// The selectors of one request.
pub struct Filter {
    label: LabelSelector,
    field: FieldSelector,
    schema: FieldSchema,
    /// Whether field terms need more than the object's name and namespace.
    needs_body: bool,
    /// The resource, to read field values in the version it serves.
    res: std::sync::Arc<ResourceDef>,
}

impl Filter {
    /// Parses `labelSelector` and `fieldSelector`; 400 when malformed or unsupported.
    pub fn from_request(
        req: &Request,
        res: &std::sync::Arc<ResourceDef>,
    ) -> Result<Self, ApiError> {
        let label = LabelSelector::parse(req.param("labelSelector").unwrap_or(""))
            .map_err(|e| ApiError::bad_request(e.message))?;
        let field = FieldSelector::parse(req.param("fieldSelector").unwrap_or(""))
            .map_err(|e| ApiError::bad_request(e.message))?;
        let schema = if res.crd.is_some() {
            FieldSchema::custom_resource(&[])
        } else {
            FieldSchema::builtin(&res.group, &res.kind)
        };
        schema
            .check(&field)
            .map_err(|e| ApiError::bad_request(e.message))?;
        let needs_body = field
            .terms()
            .iter()
            .any(|t| !t.field.starts_with("metadata."));
        Ok(Self {
            label,
            field,
            schema,
            needs_body,
            res: res.clone(),
        })
    }

    /// Whether the filter selects everything.
    pub fn is_everything(&self) -> bool {
        self.label.is_everything() && self.field.is_everything()
    }

    /// Whether a stored object is selected.
    pub fn matches(&self, obj: &Stored) -> bool {
        if !self.label.is_everything() {
            let labels: Map<String, Value> = obj
                .labels
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            if !self.label.matches(&labels) {
                return false;
            }
        }
        if self.field.is_everything() {
            return true;
        }
        let value = if self.needs_body {
            super::render::value_for(&self.res, obj)
        } else {
            json!({"metadata": {"name": obj.name, "namespace": obj.namespace}})
        };
        self.field.matches(&self.schema, &value)
    }
}
