//! The deployers' domain metrics, in the process's registry (`landscaper_process::metrics`):
//! deploy items by type and phase, counted at scrape time from the deployers' caches. Every
//! metric is described in docs/operations.md.

use std::sync::LazyLock;

use landscaper_process::metrics::ObjectCount;

/// DeployItems by `spec.type` and `status.phase` (`None` before the first), each once however
/// many deployers of the process watch it.
pub static DEPLOY_ITEMS: LazyLock<ObjectCount> = LazyLock::new(|| {
    ObjectCount::register(
        "landscaper_deployitems",
        "DeployItems by type and phase",
        &["type", "phase"],
    )
});
