//! The landscaper's domain metrics, beside the controller metrics every controller records
//! (`landscaper_process::metrics`). Gauges are counted at scrape time from the controllers'
//! caches; every metric is described in docs/operations.md.

use std::sync::LazyLock;

use landscaper_process::metrics::ObjectCount;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;

/// Installations by `status.phase` (`None` before the first).
pub static INSTALLATIONS: LazyLock<ObjectCount> = LazyLock::new(|| {
    ObjectCount::register(
        "landscaper_installations",
        "Installations by phase",
        &["phase"],
    )
});

/// Executions by `status.phase` (`None` before the first).
pub static EXECUTIONS: LazyLock<ObjectCount> = LazyLock::new(|| {
    ObjectCount::register("landscaper_executions", "Executions by phase", &["phase"])
});

/// Environments by the status of their `AgentReady` condition (`True`, `False`, `Unknown`).
pub static ENVIRONMENTS: LazyLock<ObjectCount> = LazyLock::new(|| {
    ObjectCount::register(
        "landscaper_environments",
        "Environments by the status of their AgentReady condition",
        &["agent_ready"],
    )
});

/// The pairs (registration × environment) of each registration, by whether the deployer is
/// installed there.
pub static DEPLOYER_PAIRS: LazyLock<ObjectCount> = LazyLock::new(|| {
    ObjectCount::register(
        "landscaper_deployer_pairs",
        "Pairs of a DeployerRegistration and an Environment by registration and whether the deployer is ready there",
        &["registration", "ready"],
    )
});

/// Renewals of a pair's access token, by result.
pub static PAIR_TOKEN_RENEWALS: LazyLock<Family<Vec<(String, String)>, Counter>> =
    LazyLock::new(|| {
        let family = Family::default();
        landscaper_process::metrics::register(
            "landscaper_deployer_pair_token_renewals",
            "TokenRequest tokens issued for the pairs' access Secrets, by result (success, error)",
            family.clone(),
        );
        family
    });

/// Counts one renewal of a pair's token.
pub fn pair_token_renewed(success: bool) {
    let result = if success { "success" } else { "error" };
    PAIR_TOKEN_RENEWALS
        .get_or_create(&vec![("result".to_owned(), result.to_owned())])
        .inc();
}
