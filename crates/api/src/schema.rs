//! Schema helpers for fields whose content is free-form JSON.

use schemars::{Schema, SchemaGenerator, json_schema};

/// A JSON object of any shape, kept as is (`x-kubernetes-preserve-unknown-fields`).
pub fn free_form_object(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "object", "x-kubernetes-preserve-unknown-fields": true })
}

/// Any JSON value (object, list, string, number, boolean), kept as is.
pub fn any_json(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "x-kubernetes-preserve-unknown-fields": true })
}

/// A map from names to any JSON values.
pub fn any_json_map(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "additionalProperties": { "x-kubernetes-preserve-unknown-fields": true }
    })
}
