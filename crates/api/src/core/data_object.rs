//! DataObject: a piece of data imported or exported by installations.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha1::{Digest, Sha1};

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

/// Upstream's `GenerateDataObjectName`: the name of the DataObject holding `key` in `context`.
///
/// A key starting with `#` is not contextified: the rest is the name as it is. A key with no
/// context that is already a DNS subdomain is used as it is; otherwise the name is the
/// lower-case base32 SHA-1 of `<context>/<key>`, so contexts such as `Inst.root` or `Exec.root`
/// cannot collide and any key fits a name.
pub fn data_object_name(context: &str, key: &str) -> String {
    if let Some(literal) = key.strip_prefix('#') {
        return literal.to_owned();
    }
    if context.is_empty() && is_dns_subdomain(key) {
        return key.to_owned();
    }
    base32_lower(&Sha1::digest(format!("{context}/{key}").as_bytes()))
}

/// The DataObject name of an Execution's exports (`Exec.<execution>` with an empty key).
pub fn execution_data_object_name(execution: &str) -> String {
    data_object_name(&format!("Exec.{execution}"), "")
}

/// Upstream's `subdomainRegex`: lower-case letters, digits, `.` and `-`, starting and ending
/// with a letter or digit.
fn is_dns_subdomain(key: &str) -> bool {
    let bytes = key.as_bytes();
    !bytes.is_empty()
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'.' || *b == b'-')
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
}

fn base32_lower(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let mut out = String::with_capacity(bytes.len() * 8 / 5 + 1);
    let (mut buffer, mut bits) = (0u32, 0u32);
    for &byte in bytes {
        buffer = (buffer << 8) | u32::from(byte);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(char::from(ALPHABET[((buffer >> bits) & 31) as usize]));
        }
    }
    if bits > 0 {
        out.push(char::from(ALPHABET[((buffer << (5 - bits)) & 31) as usize]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_keys_without_context_keep_their_name() {
        assert_eq!(data_object_name("", "my-data.v1"), "my-data.v1");
        assert_eq!(
            data_object_name("", "a..b"),
            "a..b",
            "upstream's loose pattern"
        );
        assert_ne!(data_object_name("", "-a"), "-a");
    }

    #[test]
    fn contextified_keys_hash_to_a_name() {
        let name = data_object_name("Inst.root", "a.z");
        assert_eq!(name.len(), 32);
        assert!(
            name.bytes()
                .all(|b| b.is_ascii_lowercase() || (b'2'..=b'7').contains(&b))
        );
        assert_ne!(name, data_object_name("Inst.other", "a.z"));
        assert_eq!(data_object_name("Inst.root", "#shared"), "shared");
        assert_eq!(data_object_name("", "#Upper"), "Upper");
        assert_ne!(data_object_name("", "Upper"), "Upper");
        assert_eq!(
            execution_data_object_name("root"),
            data_object_name("Exec.root", "")
        );
    }
}
