//! The deployers' domain metrics, in the process's registry (`landscaper_process::metrics`):
//! deploy items by type and phase, counted at scrape time from the deployers' caches, and the
//! helm deployer's chart renders. Every metric is described in docs/operations.md.

use std::sync::LazyLock;
use std::time::Duration;

use landscaper_process::metrics::ObjectCount;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Unit;

/// DeployItems by `spec.type` and `status.phase` (`None` before the first), each once however
/// many deployers of the process watch it.
pub static DEPLOY_ITEMS: LazyLock<ObjectCount> = LazyLock::new(|| {
    ObjectCount::register(
        "landscaper_deployitems",
        "DeployItems by type and phase",
        &["type", "phase"],
    )
});

/// The helm deployer's chart renders: their duration, and how many failed.
struct HelmRenders {
    duration: Histogram,
    failures: Counter,
}

static HELM_RENDERS: LazyLock<HelmRenders> = LazyLock::new(|| {
    let renders = HelmRenders {
        // 1 ms to about 16 s.
        duration: Histogram::new(exponential_buckets(0.001, 2.0, 15)),
        failures: Counter::default(),
    };
    landscaper_process::metrics::register_with_unit(
        "landscaper_helm_render_duration",
        "Time the helm deployer took to render a chart (every render, failed or not)",
        Unit::Seconds,
        renders.duration.clone(),
    );
    landscaper_process::metrics::register(
        "landscaper_helm_render_failures",
        "Chart renders of the helm deployer that failed (template, values or chart errors)",
        renders.failures.clone(),
    );
    renders
});

/// Records one render of a chart that took `took`.
pub fn helm_rendered(took: Duration, failed: bool) {
    HELM_RENDERS.duration.observe(took.as_secs_f64());
    if failed {
        HELM_RENDERS.failures.inc();
    }
}
