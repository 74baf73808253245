//! Helm's release record: the JSON body Helm v3/v4 stores per revision (name, info, chart,
//! config, manifest, hooks, version, namespace), gzip-compressed and base64-encoded as Helm's
//! Secret storage driver writes it, so `helm list`, `history` and `get` read our releases and
//! we read theirs.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::io::{Read, Write};

/// The state of one revision, with Helm's spelling.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// The current revision.
    Deployed,
    /// Uninstalled with history kept.
    Uninstalled,
    /// Replaced by a newer revision.
    Superseded,
    /// The operation failed.
    Failed,
    /// Being uninstalled.
    Uninstalling,
    /// Being installed.
    PendingInstall,
    /// Being upgraded.
    PendingUpgrade,
    /// Being rolled back.
    PendingRollback,
    /// Helm's zero value, and any state a newer Helm may add.
    #[default]
    #[serde(other)]
    Unknown,
}

impl Status {
    /// Helm's label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Unknown => "unknown",
            Status::Deployed => "deployed",
            Status::Uninstalled => "uninstalled",
            Status::Superseded => "superseded",
            Status::Failed => "failed",
            Status::Uninstalling => "uninstalling",
            Status::PendingInstall => "pending-install",
            Status::PendingUpgrade => "pending-upgrade",
            Status::PendingRollback => "pending-rollback",
        }
    }

    /// Whether an operation was under way when the revision was last written.
    pub fn is_pending(self) -> bool {
        matches!(
            self,
            Status::PendingInstall
                | Status::PendingUpgrade
                | Status::PendingRollback
                | Status::Uninstalling
        )
    }
}

/// `info` of a release. Times are RFC 3339 strings as Go writes them; Helm 4 leaves unset
/// times out, Helm 3 wrote them as `""` (both read as unset).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Info {
    /// First install of the release.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub first_deployed: String,
    /// This revision's deployment.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub last_deployed: String,
    /// Uninstall time.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub deleted: String,
    /// What happened (`Install complete`, `Upgrade complete`, or the error).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The revision's state.
    #[serde(default)]
    pub status: Status,
    /// The rendered `NOTES.txt`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub notes: String,
    /// Fields of newer Helm versions (e.g. `resources`), kept when we rewrite their records.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// The run of a hook.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct HookExecution {
    /// Start time.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub started_at: String,
    /// End time.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub completed_at: String,
    /// `Unknown`, `Running`, `Succeeded` or `Failed`; Helm writes it even when empty.
    #[serde(default)]
    pub phase: String,
}

/// A hook of the release as Helm records it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Hook {
    /// `metadata.name` of the hook object.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Its kind.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// The template path.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
    /// The rendered document.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub manifest: String,
    /// The events it runs on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<String>,
    /// The last run.
    #[serde(default)]
    pub last_run: HookExecution,
    /// `helm.sh/hook-weight`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub weight: i64,
    /// `helm.sh/hook-delete-policy`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delete_policies: Vec<String>,
    /// `helm.sh/hook-output-log-policy`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_log_policies: Vec<String>,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// One revision of a release, with Helm's field names and its `omitempty` rules. `chart` and
/// `config` stay JSON, as they are only carried.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Release {
    /// Release name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// State and times.
    #[serde(default)]
    pub info: Info,
    /// The chart: metadata, templates, values, schema, files.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub chart: Value,
    /// The user-supplied values.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub config: Map<String, Value>,
    /// The rendered manifests (without hooks).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub manifest: String,
    /// The hooks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<Hook>,
    /// Revision.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub version: i64,
    /// Release namespace.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// How Helm 4 wrote the objects: `ssa` (server-side apply) or `csa` (client-side, also
    /// when unset); `helm upgrade` applies the same way by default.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub apply_method: String,
    /// Fields of newer Helm versions, kept when we rewrite their records.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl Release {
    /// The chart's `metadata.version`, for messages.
    pub fn chart_version(&self) -> &str {
        self.chart
            .pointer("/metadata/version")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
}

/// Encodes a release as Helm stores it: JSON, gzip, base64.
pub fn encode(release: &Release) -> Result<String, String> {
    let json = serde_json::to_vec(release).map_err(|e| e.to_string())?;
    let mut gz = GzEncoder::new(Vec::new(), Compression::best());
    gz.write_all(&json).map_err(|e| e.to_string())?;
    let bytes = gz.finish().map_err(|e| e.to_string())?;
    Ok(STANDARD.encode(bytes))
}

/// Decodes what [`encode`] (or Helm) wrote; Helm also reads uncompressed JSON.
pub fn decode(text: &[u8]) -> Result<Release, String> {
    let bytes = STANDARD
        .decode(text)
        .map_err(|e| format!("release body is not base64: {e}"))?;
    let json = if bytes.starts_with(&[0x1f, 0x8b, 0x08]) {
        let mut out = Vec::new();
        GzDecoder::new(bytes.as_slice())
            .read_to_end(&mut out)
            .map_err(|e| format!("release body is not gzip: {e}"))?;
        out
    } else {
        bytes
    };
    serde_json::from_slice(&json).map_err(|e| format!("release body is not a release: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_release_survives_encoding_and_is_gzip_inside() {
        let release = Release {
            name: "web".into(),
            info: Info {
                status: Status::PendingUpgrade,
                description: "Preparing upgrade".into(),
                ..Default::default()
            },
            chart: json!({"metadata": {"name": "nginx", "version": "1.2.3"}}),
            manifest: "---\n# Source: nginx/templates/cm.yaml\nkind: ConfigMap\n".into(),
            version: 3,
            namespace: "apps".into(),
            ..Default::default()
        };
        let text = encode(&release).unwrap();
        let raw = STANDARD.decode(&text).unwrap();
        assert_eq!(&raw[..2], &[0x1f, 0x8b]);
        let back = decode(text.as_bytes()).unwrap();
        assert_eq!(back, release);
        assert_eq!(back.chart_version(), "1.2.3");
        let v: Value = serde_json::to_value(&back).unwrap();
        assert_eq!(v["info"]["status"], "pending-upgrade");
        // Helm 4 leaves unset times and empty fields out.
        assert!(
            v["info"].get("deleted").is_none() && v.get("config").is_none(),
            "{v}"
        );
    }

    #[test]
    fn fields_of_other_helm_versions_survive_a_rewrite() {
        let body = STANDARD.encode(
            br#"{"name":"x","info":{"first_deployed":"","status":"deployed","resources":{"v1/ConfigMap":[]}},"version":1,"apply_method":"ssa","future":{"a":1}}"#,
        );
        let mut r = decode(body.as_bytes()).unwrap();
        assert_eq!(
            (r.info.first_deployed.as_str(), r.apply_method.as_str()),
            ("", "ssa")
        );
        r.info.status = Status::Superseded;
        let v: Value = serde_json::to_value(&r).unwrap();
        assert_eq!(v["future"], json!({"a": 1}));
        assert_eq!(v["info"]["resources"], json!({"v1/ConfigMap": []}));
        assert_eq!(v["info"]["status"], "superseded");
        assert!(v["info"].get("first_deployed").is_none());
    }

    #[test]
    fn plain_json_bodies_are_read_too() {
        let body = STANDARD.encode(br#"{"name":"x","version":2,"info":{"status":"deployed"}}"#);
        let r = decode(body.as_bytes()).unwrap();
        assert_eq!(
            (r.name.as_str(), r.version, r.info.status),
            ("x", 2, Status::Deployed)
        );
    }
}
