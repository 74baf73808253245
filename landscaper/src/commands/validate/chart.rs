//! A Helm chart folder met by `landscaper validate`: its templates are no manifests until
//! rendered, so the chart is rendered with its default values, as `helm template` would.

use std::path::Path;

use landscaper_chart::formats::tree::Map;
use landscaper_chart::helm::chart::{self, Chart};
use landscaper_chart::helm::render::{self, ReleaseOptions, TemplateOptions};

/// The file that makes a folder a Helm chart.
const CHART_FILE: &str = "Chart.yaml";

/// Whether `dir` is a Helm chart folder.
pub fn is_chart_dir(dir: &Path) -> bool {
    dir.join(CHART_FILE).is_file()
}

/// What checking a chart folder found.
pub enum Outcome {
    /// The chart rendered; its manifests (hooks included), to validate as documents.
    Rendered {
        /// `name version` of the chart.
        chart: String,
        /// The rendered manifests, one YAML stream.
        manifests: String,
    },
    /// Nothing to render (a library chart); says why.
    Skipped(String),
}

/// Loads the chart in `dir` and renders it with its default values as release `name` of the
/// chart in namespace `default`; the error names the file and position Helm would.
pub fn check(dir: &Path) -> Result<Outcome, String> {
    let chart = chart::load(dir).map_err(|e| format!("loading the chart: {e}"))?;
    let label = format!("{} {}", chart.metadata.name, chart.metadata.version);
    if chart.metadata.chart_type == "library" {
        return Ok(Outcome::Skipped(format!(
            "library chart {label}: nothing to render"
        )));
    }
    let manifests = render_defaults(&chart)
        .map_err(|e| format!("rendering chart {label} with its default values: {e}"))?;
    Ok(Outcome::Rendered {
        chart: label,
        manifests,
    })
}

fn render_defaults(chart: &Chart) -> Result<String, String> {
    let options = TemplateOptions {
        release: ReleaseOptions {
            name: chart.metadata.name.clone(),
            namespace: "default".into(),
            ..Default::default()
        },
        ..Default::default()
    };
    let release = render::install(chart, &Map::default(), &options).map_err(|e| e.summary)?;
    let mut manifests = release.manifest;
    for hook in &release.hooks {
        manifests.push_str("\n---\n");
        manifests.push_str(&hook.content);
    }
    Ok(manifests)
}
