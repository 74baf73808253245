//! Extension hooks are called at their points of the live reconcile flow, and their results
//! steer it.

mod common;

use common::*;
use kube::api::{DeleteParams, Patch, PatchParams};
use landscaper_api::constants::{annotations, deploy_item_types::MOCK};
use landscaper_api::core::DeployItemPhase;
use landscaper_deployer::deployers::mock;
use landscaper_deployer::hooks::{Hook, HookCall, HookResult, HookType, Hooks, hook_fn};
use serde_json::json;
use std::sync::{Arc, Mutex};

const ALL: [HookType; 10] = [
    HookType::Start,
    HookType::DuringResponsibilityCheck,
    HookType::AfterResponsibilityCheck,
    HookType::ShouldReconcile,
    HookType::BeforeAnyReconcile,
    HookType::BeforeAbort,
    HookType::BeforeForceReconcile,
    HookType::BeforeDelete,
    HookType::BeforeReconcile,
    HookType::End,
];

type Calls = Arc<Mutex<Vec<(HookType, Option<String>)>>>;

fn recording(hooks: &mut Hooks) -> Calls {
    let calls: Calls = Arc::default();
    record_into(hooks, &calls);
    calls
}

fn record_into(hooks: &mut Hooks, calls: &Calls) {
    let c = calls.clone();
    hooks.register(
        hook_fn(move |call| {
            let name = call.item.as_ref().and_then(|i| i.metadata.name.clone());
            c.lock().unwrap().push((call.hook_type, name));
            Ok(None)
        }),
        &ALL,
    );
}

/// The hook points of the reconciles of `item` that did work (those reaching BeforeAny).
fn working_runs(calls: &Calls, item: &str) -> Vec<Vec<HookType>> {
    let calls = calls.lock().unwrap().clone();
    let mut runs = Vec::new();
    let mut current: Vec<HookType> = Vec::new();
    for (t, name) in calls {
        if t == HookType::Start {
            if current.contains(&HookType::BeforeAnyReconcile) {
                runs.push(std::mem::take(&mut current));
            }
            current = vec![t];
        } else if name.as_deref() == Some(item) {
            current.push(t);
        }
    }
    if current.contains(&HookType::BeforeAnyReconcile) {
        runs.push(current);
    }
    runs
}

fn flow(before: HookType) -> Vec<HookType> {
    vec![
        HookType::Start,
        HookType::DuringResponsibilityCheck,
        HookType::AfterResponsibilityCheck,
        HookType::ShouldReconcile,
        HookType::BeforeAnyReconcile,
        before,
        HookType::End,
    ]
}

async fn wait_for_run(calls: &Calls, item: &str, before: HookType) {
    wait_until(|| {
        let found = working_runs(calls, item).contains(&flow(before));
        async move { found }
    })
    .await;
}

#[tokio::test]
async fn hooks_run_at_every_point_of_reconcile_force_reconcile_abort_and_delete() {
    let env = env().await;
    let mut setup = mock::setup(env.ls.clone(), env.ls.clone(), config(MOCK));
    let calls = recording(&mut setup.hooks);
    let deployer = start(setup);

    env.item("a", MOCK, None, json!({})).await;
    env.finished("a", "job-1").await;
    wait_for_run(&calls, "a", HookType::BeforeReconcile).await;

    env.annotate("a", annotations::OPERATION, "force-reconcile")
        .await;
    wait_for_run(&calls, "a", HookType::BeforeForceReconcile).await;

    // A job that a previous deployer picked up and left running, to be aborted when the
    // deployer comes back.
    deployer.stop().await;
    env.items()
        .patch_status(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"jobID": "job-9", "phase": "Progressing"}})),
        )
        .await
        .unwrap();
    env.annotate("a", annotations::OPERATION, "abort").await;
    let mut setup = mock::setup(env.ls.clone(), env.ls.clone(), config(MOCK));
    record_into(&mut setup.hooks, &calls);
    let _d = start(setup);
    wait_for_run(&calls, "a", HookType::BeforeAbort).await;
    env.failed("a", "job-9").await;

    env.items()
        .delete("a", &DeleteParams::default())
        .await
        .unwrap();
    wait_for_run(&calls, "a", HookType::BeforeDelete).await;
}

#[tokio::test]
async fn a_start_hook_that_aborts_stops_every_reconcile() {
    let env = env().await;
    let mut setup = mock::setup(env.ls.clone(), env.ls.clone(), config(MOCK));
    let starts = Arc::new(Mutex::new(0u32));
    let s = starts.clone();
    setup.hooks.register(
        hook_fn(move |_| {
            *s.lock().unwrap() += 1;
            Ok(Some(HookResult {
                abort_reconcile: true,
                ..Default::default()
            }))
        }),
        &[HookType::Start],
    );
    // The item waits with a pending job before the deployer starts, so its first reconcile
    // sees work to do.
    env.item("a", MOCK, None, json!({})).await;
    let _d = start(setup);
    wait_until(|| {
        let n = *starts.lock().unwrap();
        async move { n >= 1 }
    })
    .await;
    let di = env.items().get("a").await.unwrap();
    assert_eq!(
        di.status.unwrap().phase,
        None,
        "the item was never picked up"
    );
    assert_eq!(
        env.ls_cluster()
            .counters()
            .count(Some("patch"), Some("deployitems"), None),
        0
    );
}

#[tokio::test]
async fn a_during_responsibility_hook_overrides_the_target_selectors() {
    let env = env().await;
    env.target("other-env", &[(annotations::ENVIRONMENT, "b")])
        .await;
    let mut cfg = config(MOCK);
    cfg.target_selectors = serde_json::from_value(json!([
        {"annotations": [{"key": annotations::ENVIRONMENT, "operator": "=", "values": ["a"]}]}
    ]))
    .unwrap();
    let mut setup = mock::setup(env.ls.clone(), env.ls.clone(), cfg);
    setup.hooks.register(
        hook_fn(|call| {
            let claim =
                call.item.as_ref().and_then(|i| i.metadata.name.as_deref()) == Some("claimed");
            Ok(claim.then(HookResult::default))
        }),
        &[HookType::DuringResponsibilityCheck],
    );
    let _d = start(setup);
    env.item("claimed", MOCK, Some("other-env"), json!({}))
        .await;
    env.succeeded("claimed", "job-1").await;
}

#[tokio::test]
async fn should_reconcile_sees_the_item_picked_up_in_the_api() {
    let env = env().await;
    let mut setup = mock::setup(env.ls.clone(), env.ls.clone(), config(MOCK));
    let seen: Arc<Mutex<Vec<Option<DeployItemPhase>>>> = Arc::default();
    let (items, s) = (env.items(), seen.clone());
    let hook: Hook = Arc::new(move |call: HookCall| {
        let (items, seen) = (items.clone(), s.clone());
        Box::pin(async move {
            let name = call.item.and_then(|i| i.metadata.name.clone());
            if let Some(name) = name {
                let stored = items.get(&name).await.unwrap();
                seen.lock()
                    .unwrap()
                    .push(stored.status.and_then(|s| s.phase));
            }
            Ok(None)
        })
    });
    setup.hooks.register(hook, &[HookType::ShouldReconcile]);
    // The item waits with a pending job before the deployer starts, so the first
    // ShouldReconcile is that of the job.
    env.item("a", MOCK, None, json!({})).await;
    let _d = start(setup);
    env.finished("a", "job-1").await;
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen.first(),
        Some(&Some(DeployItemPhase::Init)),
        "phases ShouldReconcile saw: {seen:?}"
    );
}

#[tokio::test]
async fn a_before_reconcile_hook_that_aborts_leaves_the_item_picked_up() {
    let env = env().await;
    let mut setup = mock::setup(env.ls.clone(), env.ls.clone(), config(MOCK));
    setup.hooks.register(
        hook_fn(|_| {
            Ok(Some(HookResult {
                abort_reconcile: true,
                ..Default::default()
            }))
        }),
        &[HookType::BeforeReconcile],
    );
    let _d = start(setup);
    env.item("a", MOCK, None, json!({})).await;
    let items = env.items();
    wait_until(|| {
        let items = items.clone();
        async move {
            let status = items.get("a").await.unwrap().status.unwrap_or_default();
            status.phase == Some(DeployItemPhase::Init) && status.last_reconcile_time.is_some()
        }
    })
    .await;
}
