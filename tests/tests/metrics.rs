//! Metrics and probes of both binaries, as Prometheus and the kubelet see them: `/metrics`
//! parses with a Prometheus text-format parser and its reconcile counters and object gauges
//! move while objects are reconciled; the landscaper's `/readyz` waits for every controller's
//! cache, and a standby replica under leader election is ready and writes nothing.

use std::net::SocketAddr;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::api::{Api, PostParams};
use landscaper::health::Health;
use landscaper::leader::Election;
use landscaper_api::core::{
    DeployItem, DeployItemPhase, DeployerRegistration, Execution, Installation, Target,
};
use landscaper_e2e::charts::{HelmRelease, archive_raw, helm_deploy_item};
use landscaper_e2e::http::{get, serve_probes};
use landscaper_e2e::installations::create_root;
use landscaper_e2e::objects::create;
use landscaper_e2e::registrations::registration_with_template;
use landscaper_e2e::{LS_NAMESPACE, World, eventually, spawn_helm_deployer};
use landscaper_process::probes::Probes;
use prometheus_parse::{Scrape, Value};
use serde_json::json;
use testbed::{Fault, Matcher};

/// `/metrics` at `address`, parsed.
async fn scrape(address: SocketAddr) -> Scrape {
    let (code, body) = get(address, "/metrics").await;
    assert_eq!(code, 200, "{body}");
    Scrape::parse(body.lines().map(|line| Ok(line.to_owned()))).expect("Prometheus text format")
}

/// The value of the counter or gauge `name` whose labels include `labels`, summed over the
/// series that match (0 when none does).
fn value(scrape: &Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
    scrape
        .samples
        .iter()
        .filter(|sample| sample.metric == name)
        .filter(|sample| labels.iter().all(|(k, v)| sample.labels.get(k) == Some(*v)))
        .map(|sample| match sample.value {
            Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => v,
            _ => 0.0,
        })
        .sum()
}

/// The number of observations of the histogram `name` for `controller`.
fn observations(scrape: &Scrape, name: &str, controller: &str) -> u64 {
    scrape
        .samples
        .iter()
        .filter(|sample| sample.metric == name)
        .filter(|sample| sample.labels.get("controller") == Some(controller))
        .map(|sample| match &sample.value {
            Value::Histogram(buckets) => buckets.last().map_or(0, |b| b.count as u64),
            _ => 0,
        })
        .sum()
}

fn reconciles(scrape: &Scrape, controller: &str) -> f64 {
    value(
        scrape,
        "controller_runtime_reconcile_total",
        &[("controller", controller), ("result", "success")],
    )
}

fn registration(name: &str) -> DeployerRegistration {
    registration_with_template(
        name,
        &[&format!("example.com/{name}")],
        json!({ "blueprint": { "ref": { "resourceName": format!("{name}-blueprint") } } }),
    )
}

#[tokio::test]
async fn landscaper_metrics_count_reconciles_and_objects_by_phase() {
    let mut world = World::start_without_landscaper().await;
    let health = Health::new();
    world.start_landscaper_with(world.landscaper_cluster().client(), health.clone());
    let address = serve_probes(health).await;
    let before = scrape(address).await;

    let client = world.landscaper_cluster().client();
    let installations: Api<Installation> = Api::namespaced(client.clone(), LS_NAMESPACE);
    create_root(
        &installations,
        "measured",
        json!({"blueprint": {"inline": {"filesystem": {"blueprint.yaml": "kind: Blueprint\n"}}}}),
    )
    .await;
    let executions: Api<Execution> = Api::namespaced(client.clone(), LS_NAMESPACE);
    create(
        &executions,
        json!({"metadata": {"name": "measured-alone"}, "spec": {"deployItems": []}}),
    )
    .await;
    let registrations: Api<DeployerRegistration> = Api::all(client.clone());
    registrations
        .create(&PostParams::default(), &registration("measured"))
        .await
        .unwrap();

    eventually("the installation's job ends", || async {
        installations
            .get("measured")
            .await
            .ok()
            .and_then(|i| i.status)
            .is_some_and(|s| s.job_id.is_some() && s.job_id == s.job_id_finished)
    })
    .await;
    let phase = installations
        .get("measured")
        .await
        .unwrap()
        .status
        .unwrap()
        .phase
        .unwrap();
    let controllers = ["installation", "execution", "deployerregistration"];
    eventually(
        "every controller's reconciles are counted and timed",
        || async {
            let now = scrape(address).await;
            controllers.iter().all(|controller| {
                reconciles(&now, controller) > reconciles(&before, controller)
                    && observations(
                        &now,
                        "controller_runtime_reconcile_time_seconds",
                        controller,
                    ) > observations(
                        &before,
                        "controller_runtime_reconcile_time_seconds",
                        controller,
                    )
            })
        },
    )
    .await;
    let after = scrape(address).await;
    assert!(
        value(
            &after,
            "landscaper_installations",
            &[("phase", &phase.to_string())]
        ) >= 1.0,
        "the installation counts under its phase {phase}"
    );
    assert!(
        value(&after, "landscaper_executions", &[]) >= 1.0,
        "its Execution counts"
    );
    // Every controller's series exist, the error counters included.
    for controller in [
        "environment",
        "installation",
        "execution",
        "context",
        "deployerregistration",
    ] {
        assert!(
            after
                .samples
                .iter()
                .any(|s| s.metric == "controller_runtime_reconcile_errors_total"
                    && s.labels.get("controller") == Some(controller)),
            "no error counter for {controller}"
        );
    }
}

#[tokio::test]
async fn readyz_waits_for_every_controllers_cache() {
    let mut world = World::start_without_landscaper().await;
    // The Installation controller's first lists fail: its cache syncs only after the retries.
    world.landscaper_cluster().faults().fail_next(
        3,
        Matcher::any().verb("list").resource("installations"),
        Fault::InternalError,
    );
    let health = Health::new();
    let address = serve_probes(health.clone()).await;
    let (code, body) = get(address, "/readyz").await;
    assert_eq!(
        (code, body.as_str()),
        (503, "the controllers are not started yet\n")
    );
    world.start_landscaper_with(world.landscaper_cluster().client(), health.clone());
    eventually("only the Installation cache is not synced", || async {
        get(address, "/readyz").await
            == (
                503,
                "waiting for the caches of the controllers installation\n".to_owned(),
            )
    })
    .await;
    eventually("ready once it is synced", || async {
        get(address, "/readyz").await == (200, "ok\n".to_owned())
    })
    .await;
    assert_eq!(get(address, "/healthz").await.0, 200);
}

#[tokio::test]
async fn a_landscaper_stopped_before_its_caches_sync_stops() {
    let mut world = World::start_without_landscaper().await;
    // The Installation controller's first lists fail: the stop comes before its cache syncs.
    world.landscaper_cluster().faults().fail_next(
        3,
        Matcher::any().verb("list").resource("installations"),
        Fault::InternalError,
    );
    let health = Health::new();
    world.start_landscaper_with(world.landscaper_cluster().client(), health.clone());
    assert!(health.ready().is_err(), "not synced yet");
    tokio::time::timeout(Duration::from_secs(10), world.stop_landscaper())
        .await
        .expect("the landscaper stops at once");
}

#[tokio::test]
async fn a_standby_replica_is_ready_and_writes_nothing_until_it_leads() {
    let world = World::start_without_landscaper().await;
    let cluster = world.landscaper_cluster();
    let admin = cluster.client();
    // Another replica holds the Lease and renews it.
    let leases: Api<Lease> = Api::namespaced(admin.clone(), LS_NAMESPACE);
    let lease: Lease = serde_json::from_value(json!({
        "metadata": { "name": "landscaper-leader" },
        "spec": { "holderIdentity": "the-leader", "leaseDurationSeconds": 3600 },
    }))
    .unwrap();
    let mut lease = leases.create(&PostParams::default(), &lease).await.unwrap();
    lease.spec.as_mut().unwrap().renew_time = Some(MicroTime(Timestamp::now()));
    let lease = leases
        .replace("landscaper-leader", &PostParams::default(), &lease)
        .await
        .unwrap();

    let token = cluster.add_user("standby", &["system:masters"]);
    let client = cluster.client_as(&token);
    let health = Health::new();
    let address = serve_probes(health.clone()).await;
    // What `landscaper run --leader-elect` does.
    health.standby();
    let election = Election::new(client.clone(), LS_NAMESPACE, "landscaper-leader", "standby")
        .with_timing(Duration::from_secs(2), Duration::from_millis(200));
    let settings = landscaper::settings::Settings {
        namespace: LS_NAMESPACE.to_owned(),
        ..Default::default()
    };
    let replica = tokio::spawn({
        let health = health.clone();
        async move {
            election
                .run(landscaper::controllers::run_with_health(
                    client,
                    settings,
                    health,
                    std::future::pending(),
                ))
                .await
        }
    });
    let registrations: Api<DeployerRegistration> = Api::all(admin.clone());
    registrations
        .create(&PostParams::default(), &registration("waiting"))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(get(address, "/readyz").await, (200, "ok\n".to_owned()));
    assert!(health.is_standby());
    let writes: Vec<_> = cluster
        .writes()
        .into_iter()
        .filter(|w| w.user == "standby")
        .map(|w| format!("{} {}/{}", w.verb, w.full_resource(), w.name))
        .collect();
    assert!(writes.is_empty(), "the standby wrote {writes:?}");
    assert!(
        registrations
            .get("waiting")
            .await
            .unwrap()
            .finalizers()
            .is_empty(),
        "the standby reconciled"
    );

    // The leader goes away and releases the Lease: the standby takes over and reconciles.
    let mut released = lease;
    released.spec.as_mut().unwrap().holder_identity = None;
    leases
        .replace("landscaper-leader", &PostParams::default(), &released)
        .await
        .unwrap();
    eventually("the new leader reconciles the registration", || async {
        !registrations
            .get("waiting")
            .await
            .unwrap()
            .finalizers()
            .is_empty()
    })
    .await;
    assert!(!health.is_standby());
    eventually(
        "the new leader is ready once its caches are synced",
        || async { get(address, "/readyz").await == (200, "ok\n".to_owned()) },
    )
    .await;
    replica.abort();
}

#[tokio::test]
async fn agent_metrics_count_deployer_reconciles_renders_and_token_renewals() {
    const ENVIRONMENT: &str = "metered";
    let world = World::start().await;
    let agent = world.production_agent(ENVIRONMENT).await;
    let address = serve_probes(agent.agent.health()).await;
    let (_stop, _task) = spawn_helm_deployer(agent.agent, 2);
    let landscaper = world.landscaper_cluster().client();
    let targets: Api<Target> = Api::namespaced(landscaper.clone(), LS_NAMESPACE);
    eventually("the environment is registered", || async {
        targets.get_opt(ENVIRONMENT).await.unwrap().is_some()
    })
    .await;
    let before = scrape(address).await;
    assert!(
        value(
            &before,
            "landscaper_agent_token_renewals_total",
            &[("result", "success")]
        ) >= 1.0,
        "registering issued a deployer token"
    );

    // A chart that cannot render.
    let chart = tempfile::tempdir().unwrap();
    std::fs::write(
        chart.path().join("Chart.yaml"),
        "apiVersion: v2\nname: broken\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::create_dir(chart.path().join("templates")).unwrap();
    std::fs::write(
        chart.path().join("templates/broken.yaml"),
        "{{ fail \"broken on purpose\" }}\n",
    )
    .unwrap();
    let raw = archive_raw(chart.path());
    let item = helm_deploy_item(
        "broken",
        ENVIRONMENT,
        HelmRelease {
            name: "broken",
            namespace: "broken",
            raw: &raw,
            values: json!({}),
        },
    );
    let items: Api<DeployItem> = Api::namespaced(landscaper, LS_NAMESPACE);
    let mut item = item;
    item.status = None;
    items.create(&PostParams::default(), &item).await.unwrap();
    eventually("the item fails", || async {
        items
            .get("broken")
            .await
            .ok()
            .and_then(|i| i.status)
            .is_some_and(|s| s.phase == Some(DeployItemPhase::Failed))
    })
    .await;
    let after = scrape(address).await;
    assert!(
        value(&after, "landscaper_helm_render_failures_total", &[])
            > value(&before, "landscaper_helm_render_failures_total", &[]),
        "the failed render is counted"
    );
    let controller = format!("agent-helm-deployer-{ENVIRONMENT}");
    assert!(
        reconciles(&after, &controller) > reconciles(&before, &controller),
        "the deployer's reconciles are counted under {controller}"
    );
    assert!(
        value(
            &after,
            "landscaper_deployitems",
            &[
                ("type", "landscaper.gardener.cloud/helm"),
                ("phase", "Failed")
            ]
        ) >= 1.0
    );
    let renders = after
        .samples
        .iter()
        .find(|s| s.metric == "landscaper_helm_render_duration_seconds")
        .map(|s| match &s.value {
            Value::Histogram(buckets) => buckets.last().map_or(0.0, |b| b.count),
            _ => 0.0,
        });
    assert!(renders.unwrap_or(0.0) >= 1.0, "renders are timed");
}

/// A free loopback address for a server the test does not bind itself.
fn free_loopback_address() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free loopback port");
    listener.local_addr().expect("bound address")
}

#[tokio::test]
async fn the_deployer_command_serves_probes_and_its_reconcile_metrics() {
    const NS: &str = "mocked";
    let world = World::start().await;
    world.create_namespace(world.landscaper_cluster(), NS).await;
    let kubeconfig = world.kubeconfig_file(world.landscaper_cluster(), None);
    let address = free_loopback_address();
    let args = [
        "landscaper-agent".to_owned(),
        "deployer".to_owned(),
        "mock".to_owned(),
        format!("--landscaper-kubeconfig={}", kubeconfig.display()),
        format!("--namespace={NS}"),
        format!("--health-address={address}"),
    ];
    let (_stop, stopped) = tokio::sync::oneshot::channel::<()>();
    // The binary's host: the probe server listens as in a pod.
    tokio::spawn(landscaper_agent::cli::run(
        args,
        landscaper_agent::cli::Host::process(),
        async move {
            let _ = stopped.await;
        },
    ));
    eventually("the deployer answers /readyz", || async {
        tokio::net::TcpStream::connect(address).await.is_ok()
            && get(address, "/readyz").await.0 == 200
    })
    .await;
    assert_eq!(get(address, "/healthz").await.0, 200);
    let before = scrape(address).await;

    let items: Api<DeployItem> = Api::namespaced(world.landscaper_cluster().client(), NS);
    let item: DeployItem = serde_json::from_value(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "DeployItem",
        "metadata": {"name": "mocked"},
        "spec": {
            "type": "landscaper.gardener.cloud/mock",
            "config": {
                "apiVersion": "mock.deployer.landscaper.gardener.cloud/v1alpha1",
                "kind": "ProviderConfiguration",
                "phase": "Succeeded",
            },
        },
    }))
    .expect("a DeployItem");
    items.create(&PostParams::default(), &item).await.unwrap();
    items
        .patch_status(
            "mocked",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"status": {
                "jobID": "job-1",
                "jobIDGenerationTime": k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(Timestamp::now()),
            }})),
        )
        .await
        .unwrap();
    eventually("the mock deployer finishes the job", || async {
        items
            .get("mocked")
            .await
            .ok()
            .and_then(|i| i.status)
            .is_some_and(|s| {
                s.job_id_finished.as_deref() == Some("job-1")
                    && s.phase == Some(DeployItemPhase::Succeeded)
            })
    })
    .await;
    let after = scrape(address).await;
    assert!(
        reconciles(&after, "mock-deployer") > reconciles(&before, "mock-deployer"),
        "the deployer's reconciles are counted under its name"
    );
    assert!(
        observations(
            &after,
            "controller_runtime_reconcile_time_seconds",
            "mock-deployer"
        ) >= 1
    );
    assert!(
        value(
            &after,
            "landscaper_deployitems",
            &[
                ("type", "landscaper.gardener.cloud/mock"),
                ("phase", "Succeeded")
            ]
        ) >= 1.0
    );
}
