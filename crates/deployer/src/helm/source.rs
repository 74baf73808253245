//! Where a chart comes from: the provider configuration's `chart` resolved to a loaded chart.
//! An inline archive (`archive.raw`, base64 `.tgz`) is loaded here; fetching remote archives,
//! Helm repositories and OCI references belongs to the chart fetcher and is reported as an
//! unsupported source until that lands.

use crate::error::Error;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use landscaper_api::deployer::Chart as ChartSource;
use landscaper_chart::chart::{self, Chart};

const OPERATION: &str = "ResolveChart";

/// A short description of the source, for messages (`inline archive`, `oci://…`).
pub fn describe(source: &ChartSource) -> String {
    if let Some(r) = &source.reference {
        return format!("OCI chart {r}");
    }
    if let Some(repo) = &source.helm_chart_repo {
        return format!(
            "chart {} {} of repository {}",
            repo.helm_chart_name.as_deref().unwrap_or_default(),
            repo.helm_chart_version.as_deref().unwrap_or_default(),
            repo.helm_chart_repo_url.as_deref().unwrap_or_default()
        );
    }
    if let Some(url) = source
        .archive
        .as_ref()
        .and_then(|a| a.remote.as_ref())
        .and_then(|r| r.url.as_deref())
    {
        return format!("chart archive {url}");
    }
    "inline chart archive".into()
}

/// Loads the chart the configuration points at.
pub fn resolve(source: &ChartSource, item: &str) -> Result<Chart, Error> {
    let raw = source.archive.as_ref().and_then(|a| a.raw.as_deref());
    let Some(raw) = raw else {
        return Err(Error::config(
            OPERATION,
            "UnsupportedChartSource",
            format!(
                "DeployItem {item} spec.config.chart: {} cannot be fetched by this deployer yet; use chart.archive.raw",
                describe(source)
            ),
        ));
    };
    // Upstream accepts base64 with line breaks (as `base64` wraps it).
    let compact: String = raw.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let bytes = STANDARD.decode(compact.as_bytes()).map_err(|e| {
        Error::config(
            OPERATION,
            "InvalidChartArchive",
            format!("DeployItem {item} spec.config.chart.archive.raw is not base64: {e}"),
        )
    })?;
    chart::load_archive(&bytes).map_err(|e| {
        Error::config(
            OPERATION,
            "InvalidChart",
            format!("DeployItem {item} spec.config.chart.archive.raw: loading the chart: {e}"),
        )
    })
}
