//! Helm's Secret storage driver: one Secret `sh.helm.release.v1.<name>.v<revision>` of type
//! `helm.sh/release.v1` per revision in the release namespace, labelled with name, owner,
//! status and version (and Helm 4's `createdAt`/`modifiedAt` Unix seconds), the encoded
//! release under `release`.

use super::release::{self, Release, Status};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{DeleteParams, ListParams, ObjectMeta, PostParams};
use landscaper_deployer::error::{Error, describe_kube_error, is_not_found};
use std::collections::BTreeMap;

/// The Secret type of Helm's release records.
pub const SECRET_TYPE: &str = "helm.sh/release.v1";
/// Revisions kept per release, as `helm upgrade --history-max` defaults to.
pub const HISTORY_MAX: usize = 10;
const OPERATION: &str = "HelmRelease";
/// The labels Helm's storage driver owns on its records.
const SYSTEM_LABELS: [&str; 6] = [
    "name",
    "owner",
    "status",
    "version",
    "createdAt",
    "modifiedAt",
];

/// The Secret name of one revision.
pub fn secret_name(name: &str, version: i64) -> String {
    format!("sh.helm.release.v1.{name}.v{version}")
}

/// Release records of one release namespace.
pub struct Storage {
    api: Api<Secret>,
    namespace: String,
}

impl Storage {
    /// Records in `namespace`, read and written with `client` (the deploying identity).
    pub fn new(client: kube::Client, namespace: &str) -> Self {
        Self {
            api: Api::namespaced(client, namespace),
            namespace: namespace.into(),
        }
    }

    /// Every revision of `name`, oldest first; unreadable records are skipped with a log,
    /// as Helm does not own them either.
    pub async fn history(&self, name: &str) -> Result<Vec<Release>, Error> {
        let params = ListParams::default().labels(&format!("owner=helm,name={name}"));
        let list = self
            .api
            .list(&params)
            .await
            .map_err(|e| self.kube_error("list", name, &e))?;
        let mut out: Vec<Release> = list
            .items
            .iter()
            .filter(|s| s.type_.as_deref() == Some(SECRET_TYPE))
            .filter_map(|s| {
                let body = s.data.as_ref()?.get("release")?;
                match release::decode(&body.0) {
                    Ok(r) => Some(r),
                    Err(e) => {
                        tracing::warn!(secret = ?s.metadata.name, error = %e, "skipping unreadable helm release record");
                        None
                    }
                }
            })
            .collect();
        out.sort_by_key(|r| r.version);
        Ok(out)
    }

    /// Writes a new revision.
    pub async fn create(&self, r: &Release) -> Result<(), Error> {
        let secret = self.secret(r, BTreeMap::from([("createdAt".into(), unix_now())]))?;
        self.api
            .create(&PostParams::default(), &secret)
            .await
            .map_err(|e| self.kube_error("create", &r.name, &e))?;
        Ok(())
    }

    /// Rewrites an existing revision (its status changed). Custom labels (Helm's `--labels`)
    /// stay; Helm's own are written afresh, and `createdAt` goes, as Helm's update drops it.
    pub async fn update(&self, r: &Release) -> Result<(), Error> {
        let name = secret_name(&r.name, r.version);
        let current = self
            .api
            .get(&name)
            .await
            .map_err(|e| self.kube_error("get", &r.name, &e))?;
        let mut labels = current.metadata.labels.unwrap_or_default();
        labels.retain(|k, _| !SYSTEM_LABELS.contains(&k.as_str()));
        labels.insert("modifiedAt".into(), unix_now());
        let mut secret = self.secret(r, labels)?;
        secret.metadata.resource_version = current.metadata.resource_version;
        self.api
            .replace(&name, &PostParams::default(), &secret)
            .await
            .map_err(|e| self.kube_error("update", &r.name, &e))?;
        Ok(())
    }

    /// Deletes one revision; a missing one is fine.
    pub async fn delete(&self, name: &str, version: i64) -> Result<(), Error> {
        match self
            .api
            .delete(&secret_name(name, version), &DeleteParams::default())
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if is_not_found(&e) => Ok(()),
            Err(e) => Err(self.kube_error("delete", name, &e)),
        }
    }

    /// Deletes the oldest superseded or failed revisions beyond [`HISTORY_MAX`], as Helm's
    /// `--history-max`; the deployed revision always stays.
    pub async fn prune(&self, name: &str) -> Result<(), Error> {
        let history = self.history(name).await?;
        let mut excess = history.len().saturating_sub(HISTORY_MAX);
        for r in &history {
            if excess == 0 {
                break;
            }
            if r.info.status == Status::Deployed {
                continue;
            }
            self.delete(name, r.version).await?;
            excess -= 1;
        }
        Ok(())
    }

    /// The record of `r`, with `labels` under Helm's own.
    fn secret(&self, r: &Release, mut labels: BTreeMap<String, String>) -> Result<Secret, Error> {
        let body = release::encode(r).map_err(|e| {
            Error::transient(
                OPERATION,
                "EncodeRelease",
                format!("release {}: {e}", r.name),
            )
        })?;
        labels.extend([
            ("name".to_string(), r.name.clone()),
            ("owner".to_string(), "helm".to_string()),
            ("status".to_string(), r.info.status.as_str().to_string()),
            ("version".to_string(), r.version.to_string()),
        ]);
        Ok(Secret {
            metadata: ObjectMeta {
                name: Some(secret_name(&r.name, r.version)),
                namespace: Some(self.namespace.clone()),
                labels: Some(labels),
                ..Default::default()
            },
            type_: Some(SECRET_TYPE.into()),
            data: Some(BTreeMap::from([(
                "release".to_string(),
                ByteString(body.into_bytes()),
            )])),
            ..Default::default()
        })
    }
}

impl Storage {
    /// A failed `verb` on the records of release `name`. Refusals (401, 403) end the job at
    /// once with the verb and resource the deploying identity lacks, and nothing of the
    /// server's answer (which names the identity); other failures are retried.
    fn kube_error(&self, verb: &str, name: &str, e: &kube::Error) -> Error {
        let ns = &self.namespace;
        match e {
            kube::Error::Api(s) if s.code == 401 || s.code == 403 => {
                let refused = Error::from_kube(OPERATION, "", e);
                Error {
                    message: format!(
                        "the target cluster refuses to {verb} secrets in namespace {ns} (the release records of helm release {name}): {}; the deploying identity needs {verb} on secrets there",
                        if s.code == 401 {
                            "not authenticated (401)"
                        } else {
                            "forbidden (403)"
                        }
                    ),
                    ..refused
                }
            }
            _ => Error::transient(
                OPERATION,
                "ReleaseStorage",
                format!(
                    "{verb} the records of helm release {name} (secrets in namespace {ns}): {}",
                    describe_kube_error(e)
                ),
            ),
        }
    }
}

/// Seconds since the Unix epoch, as Helm writes them into `createdAt` and `modifiedAt`.
fn unix_now() -> String {
    k8s_openapi::jiff::Timestamp::now().as_second().to_string()
}
