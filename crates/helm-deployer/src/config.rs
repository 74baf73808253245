//! The helm provider configuration, read and checked before anything is fetched or written.

use landscaper_api::deployer::HelmProviderConfiguration;
use landscaper_chart::helm::render::is_valid_release_name;
use landscaper_deployer::continuous_reconcile::Schedule;
use landscaper_deployer::deployer::Job;
use landscaper_deployer::error::Error;

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
    if !is_valid_release_name(&config.name) {
        return Err(invalid(
            "name",
            format!(
                "release name {:?} is invalid: it must be a DNS-1123 subdomain of at most 53 characters",
                config.name
            ),
        ));
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
