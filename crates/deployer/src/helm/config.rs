//! The helm provider configuration, read and checked before anything is fetched or written.

use crate::continuous_reconcile::Schedule;
use crate::deployer::Job;
use crate::error::Error;
use landscaper_api::deployer::HelmProviderConfiguration;

const OPERATION: &str = "Reconcile";

/// Reads the item's configuration and checks what decoding cannot: names, one chart source,
/// the schedule.
pub fn read(job: &Job) -> Result<HelmProviderConfiguration, Error> {
    let config: HelmProviderConfiguration = job.config()?;
    let item = job.item_name();
    let invalid = |field: &str, why: String| {
        Error::config(
            OPERATION,
            "InvalidProviderConfiguration",
            format!("DeployItem {item} spec.config.{field}: {why}"),
        )
    };
    if config.name.is_empty() {
        return Err(invalid("name", "the release name is required".into()));
    }
    if let Err(why) = check_release_name(&config.name) {
        return Err(invalid("name", why));
    }
    if config.namespace.is_empty() {
        return Err(invalid(
            "namespace",
            "the release namespace is required".into(),
        ));
    }
    let chart = &config.chart;
    let sources = [
        chart.reference.is_some(),
        chart.archive.is_some(),
        chart.helm_chart_repo.is_some(),
        chart.resource_ref.is_some(),
        chart.from_resource.is_some(),
    ];
    match sources.iter().filter(|s| **s).count() {
        0 => {
            return Err(invalid(
                "chart",
                "one of ref, archive, helmChartRepo or resourceRef is required".into(),
            ));
        }
        1 => {}
        _ => {
            return Err(invalid(
                "chart",
                "only one of ref, archive, helmChartRepo or resourceRef may be set".into(),
            ));
        }
    }
    if let Some(spec) = &config.continuous_reconcile {
        Schedule::from_spec(spec).map_err(|e| {
            Error::config(
                OPERATION,
                "InvalidProviderConfiguration",
                format!("DeployItem {item} spec.config.{e}"),
            )
        })?;
    }
    Ok(config)
}

/// Helm's release name rule: a DNS-1123 subdomain of at most 53 characters.
fn check_release_name(name: &str) -> Result<(), String> {
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if name.len() > 53 || !name.split('.').all(label_ok) {
        return Err(format!(
            "release name {name:?} is invalid: it must be a DNS-1123 subdomain of at most 53 characters"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_release_name;

    #[test]
    fn release_names_follow_helms_rule() {
        assert!(check_release_name("web-1.prod").is_ok());
        assert!(check_release_name("Web").is_err());
        assert!(check_release_name("-web").is_err());
        assert!(check_release_name(&"a".repeat(54)).is_err());
    }
}
