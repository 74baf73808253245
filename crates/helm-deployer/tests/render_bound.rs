//! The helm deployer renders at most one chart per core at once; the jobs of further items
//! wait for a render slot. The chart's template calls `lookup`, whose request the target
//! cluster never answers, so each running render holds its slot and the number of lookups
//! waiting at once is the number of renders running. (In a test binary of its own: the
//! slots are shared by the whole process.)

mod common;

use std::time::Duration;

use common::*;
use landscaper_api::constants::deploy_item_types::HELM;
use landscaper_api::core::DeployItemPhase;
use landscaper_helm_deployer as helm;
use serde_json::json;
use testbed::{Fault, Matcher};

/// The lookups of the probe chart that are waiting for an answer right now.
fn waiting_lookups(env: &Env) -> usize {
    env.target_cluster()
        .requests()
        .iter()
        .filter(|r| r.verb == "get" && r.resource == "configmaps" && r.name == "probe")
        .filter(|r| r.code == 0)
        .count()
}

async fn progressing(env: &Env, items: usize) -> usize {
    let mut n = 0;
    for i in 0..items {
        let di = env.items().get(&format!("probe-{i}")).await.unwrap();
        if di.status.and_then(|s| s.phase) == Some(DeployItemPhase::Progressing) {
            n += 1;
        }
    }
    n
}

#[tokio::test]
async fn renders_beyond_one_per_core_wait_for_a_slot() {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let items = cores + 2;
    let env = env_with_target().await;
    let lookup = Matcher::any()
        .verb("get")
        .resource("configmaps")
        .name("probe");
    env.target_cluster()
        .faults()
        .fail_next(items, lookup, Fault::Hang);
    let mut config = config(HELM);
    config.workers = u16::try_from(items + 2).unwrap();
    let deployer = start(helm::setup(env.ls.clone(), env.ls.clone(), config));
    let archive = lookup_probe_archive();
    for i in 0..items {
        let provider = json!({
            "apiVersion": "helm.deployer.landscaper.gardener.cloud/v1alpha1",
            "kind": "ProviderConfiguration",
            "name": format!("probe-{i}"),
            "namespace": "apps",
            "createNamespace": true,
            "chart": {"archive": {"raw": archive}},
            "values": {},
        });
        env.item(&format!("probe-{i}"), HELM, Some("cluster"), provider)
            .await;
    }

    // Every job is running, but only one render per core has reached its lookup.
    wait_until(|| async { progressing(&env, items).await == items }).await;
    wait_until(|| async { waiting_lookups(&env) >= cores }).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(waiting_lookups(&env), cores, "renders running at once");

    // Let the hanging lookups fail, so the renders end before the deployer stops.
    env.target_cluster().faults().clear();
    env.target_cluster().faults().restart();
    deployer.stop().await;
}
