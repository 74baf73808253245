//! DataObject: a piece of data imported or exported by installations.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::top_level::{core_api_version, object_meta_schema, plain_string, top_level_kind};

/// A piece of data imported or exported by installations.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DataObject {
    /// `landscaper.gardener.cloud/v1alpha1`.
    #[serde(default = "core_api_version")]
    #[schemars(schema_with = "plain_string")]
    pub api_version: String,
    /// `DataObject`.
    #[serde(default = "data_object_kind")]
    #[schemars(schema_with = "plain_string")]
    pub kind: String,
    /// Standard object metadata.
    #[serde(default)]
    #[schemars(schema_with = "object_meta_schema")]
    pub metadata: ObjectMeta,
    /// The data, any JSON value.
    #[schemars(schema_with = "crate::schema::any_json")]
    pub data: Value,
}

fn data_object_kind() -> String {
    "DataObject".to_owned()
}

top_level_kind!(DataObject, kind = "DataObject", plural = "dataobjects");
