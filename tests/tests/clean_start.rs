//! A clean start of the landscaper and an agent (with the chart's and the documented RBAC):
//! neither logs a warning, and no request of either is refused, neither for a conflict,
//! although both write the Environment's status, nor for want of a permission.

use std::time::Duration;

use kube::api::Api;
use landscaper_api::constants::conditions;
use landscaper_api::core::{ConditionStatus, Environment, Target, find_condition};
use landscaper_e2e::logs::Captured;
use landscaper_e2e::{LS_NAMESPACE, World, eventually, spawn_helm_deployer};
use tracing_subscriber::filter::LevelFilter;

#[tokio::test]
async fn a_clean_start_logs_no_warning_and_meets_no_conflict() {
    let captured = Captured::default();
    tracing_subscriber::fmt()
        .with_max_level(LevelFilter::WARN)
        .with_ansi(false)
        .with_writer(captured.clone())
        .init();

    let world = World::start().await;
    let agent = world.production_agent("clean").await;
    let (stop, running) = spawn_helm_deployer(agent.agent, 2);
    let landscaper = world.landscaper_cluster().client();
    let environments: Api<Environment> = Api::all(landscaper.clone());
    let targets: Api<Target> = Api::namespaced(landscaper, LS_NAMESPACE);
    eventually("the environment is registered and ready", || async {
        let ready = environments
            .get_opt("clean")
            .await
            .unwrap()
            .and_then(|e| e.status)
            .and_then(|s| find_condition(&s.conditions, conditions::AGENT_READY).cloned())
            .is_some_and(|c| c.status == ConditionStatus::True);
        ready && targets.get_opt("clean").await.unwrap().is_some()
    })
    .await;
    // A few heartbeats (periods of 1 s), each a status write beside the landscaper's.
    tokio::time::sleep(Duration::from_secs(3)).await;
    stop.send(()).unwrap();
    running.await.unwrap();

    let logs = captured.text();
    assert!(logs.is_empty(), "warnings at a clean start:\n{logs}");
    for cluster in [world.landscaper_cluster(), world.fenced_cluster()] {
        let refused: Vec<_> = cluster
            .requests()
            .into_iter()
            .filter(|r| matches!(r.code, 403 | 409 | 422))
            .collect();
        assert!(
            refused.is_empty(),
            "{}: refused at a clean start: {refused:#?}",
            cluster.name()
        );
    }
}
