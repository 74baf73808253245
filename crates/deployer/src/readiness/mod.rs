//! Readiness checks of deployed objects: the default checks of workload kinds and custom
//! JSONPath requirements, polled with backoff until all pass, within the item's progressing
//! timeout and interruptible by abort.

mod custom;
mod default_checks;

pub use default_checks::Verdict;

use crate::applier::split_api_version;
use crate::contract::interrupt::{Backoff, Interrupt};
use crate::error::Error;
use crate::target_access::TargetCluster;
use kube::api::ListParams;
use landscaper_api::deployer::{ManagedResourceStatus, ReadinessCheckConfiguration};
use serde_json::Value;
use std::time::Duration;

const OPERATION: &str = "WaitForReadiness";

/// Waits until every check passes. A failed workload (a failed Job or Pod) ends the wait at
/// once; otherwise the wait ends with the interrupt's timeout error, listing what is not ready.
pub async fn wait_ready(
    cluster: &TargetCluster,
    managed: &[ManagedResourceStatus],
    config: &ReadinessCheckConfiguration,
    interrupt: &Interrupt,
) -> Result<(), Error> {
    let mut backoff = Backoff::new(Duration::from_millis(100), Duration::from_secs(5));
    loop {
        let pending = not_ready(cluster, managed, config).await?;
        if pending.is_empty() {
            return Ok(());
        }
        tracing::debug!(not_ready = ?pending, "waiting for readiness");
        interrupt
            .sleep(backoff.next_delay(), OPERATION)
            .await
            .map_err(|e| {
                if e.reason == "Aborted" {
                    e
                } else {
                    Error {
                        message: format!("{}; not ready: {}", e.message, pending.join("; ")),
                        ..e
                    }
                }
            })?;
    }
}

/// What is not ready now, one line per object.
pub async fn not_ready(
    cluster: &TargetCluster,
    managed: &[ManagedResourceStatus],
    config: &ReadinessCheckConfiguration,
) -> Result<Vec<String>, Error> {
    let mut pending = Vec::new();
    if config.disable_default != Some(true) {
        for m in managed {
            let r = &m.resource;
            let (api_version, kind) = (
                r.api_version.as_deref().unwrap_or_default(),
                r.kind.as_deref().unwrap_or_default(),
            );
            if !default_checks::applies_to(api_version, kind) {
                continue;
            }
            let name = r.name.as_deref().unwrap_or_default();
            let ns = r.namespace.as_deref();
            let label = describe(kind, ns, name);
            match fetch(cluster, api_version, kind, ns, name).await? {
                None => pending.push(format!("{label}: not found")),
                Some(obj) => verdict(&label, default_checks::check(kind, &obj), &mut pending)?,
            }
        }
    }
    for (i, c) in config.custom.iter().enumerate() {
        if c.disabled == Some(true) {
            continue;
        }
        let field = format!("readinessChecks.custom[{i}] ({})", c.name);
        let mut objects = Vec::new();
        for r in &c.resource_selector {
            let label = describe(&r.kind, r.namespace.as_deref(), &r.name);
            match fetch(
                cluster,
                &r.api_version,
                &r.kind,
                r.namespace.as_deref(),
                &r.name,
            )
            .await?
            {
                Some(o) => objects.push((label, o)),
                None => pending.push(format!("{field}: {label}: not found")),
            }
        }
        if let Some(sel) = &c.label_selector {
            objects.extend(list(cluster, &sel.api_version, &sel.kind, &sel.match_labels).await?);
        }
        for (label, obj) in objects {
            let v = custom::check(&c.requirements, &obj).map_err(|e| {
                Error::config(OPERATION, "InvalidReadinessCheck", format!("{field}: {e}"))
            })?;
            verdict(&format!("{field}: {label}"), v, &mut pending)?;
        }
    }
    Ok(pending)
}

fn verdict(label: &str, v: Verdict, pending: &mut Vec<String>) -> Result<(), Error> {
    match v {
        Verdict::Ready => Ok(()),
        Verdict::NotReady(why) => {
            pending.push(format!("{label}: {why}"));
            Ok(())
        }
        Verdict::Failed(why) => Err(Error::config(
            OPERATION,
            "WorkloadFailed",
            format!("{label}: {why}"),
        )),
    }
}

fn describe(kind: &str, ns: Option<&str>, name: &str) -> String {
    match ns {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    }
}

async fn fetch(
    cluster: &TargetCluster,
    api_version: &str,
    kind: &str,
    namespace: Option<&str>,
    name: &str,
) -> Result<Option<Value>, Error> {
    let resolved = cluster.discovery.resolve(api_version, kind).await?;
    let api = cluster.api(&resolved, namespace);
    let obj = api
        .get_opt(name)
        .await
        .map_err(|e| Error::from_kube(OPERATION, &describe(kind, namespace, name), &e))?;
    obj.map(|o| {
        serde_json::to_value(o)
            .map_err(|e| Error::transient(OPERATION, "Decode", format!("{kind} {name}: {e}")))
    })
    .transpose()
}

async fn list(
    cluster: &TargetCluster,
    api_version: &str,
    kind: &str,
    labels: &std::collections::BTreeMap<String, String>,
) -> Result<Vec<(String, Value)>, Error> {
    let resolved = cluster.discovery.resolve(api_version, kind).await?;
    let api = cluster.api(&resolved, None);
    let selector = labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    let objects = api
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|e| {
            Error::from_kube(
                OPERATION,
                &format!(
                    "{kind}.{} with labels {selector}",
                    split_api_version(api_version).0
                ),
                &e,
            )
        })?;
    objects
        .items
        .into_iter()
        .map(|o| {
            let label = describe(
                kind,
                o.metadata.namespace.as_deref(),
                o.metadata.name.as_deref().unwrap_or_default(),
            );
            serde_json::to_value(o)
                .map(|v| (label, v))
                .map_err(|e| Error::transient(OPERATION, "Decode", e.to_string()))
        })
        .collect()
}
