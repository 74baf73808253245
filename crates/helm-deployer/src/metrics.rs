//! The helm deployer's metrics, in the process's registry (`landscaper_process::metrics`): its
//! chart renders. Every metric is described in docs/operations.md.

use std::sync::LazyLock;
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Unit;

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
