//! The agent registers its environment, the landscaper turns it into a Target, and an
//! uninstall removes everything again.

use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use landscaper_agent::cleanup::{Cleanup, CleanupError};
use landscaper_agent::clients::token_of_kubeconfig;
use landscaper_agent::health;
use landscaper_agent::names::Names;
use landscaper_agent::registration::RegistrationError;
use landscaper_agent::registration::host::HostRegistration;
use landscaper_agent::token::TokenLifetime;
use landscaper_api::constants::{annotations, conditions, finalizers, labels};
use landscaper_api::core::{Condition, ConditionStatus, Environment, Target, find_condition};
use landscaper_e2e::objects::exists;
use landscaper_e2e::{LS_NAMESPACE, World, eventually, spawn_agent};
use serde_json::{Value, json};
use testbed::{Fault, Matcher};

async fn environment(world: &World, name: &str) -> Option<Environment> {
    Api::<Environment>::all(world.landscaper_cluster().client())
        .get_opt(name)
        .await
        .unwrap()
}

async fn target(world: &World, name: &str) -> Option<Target> {
    Api::<Target>::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE)
        .get_opt(name)
        .await
        .unwrap()
}

async fn agent_condition(world: &World, name: &str) -> Option<ConditionStatus> {
    let environment = environment(world, name).await?;
    find_condition(&environment.status?.conditions, conditions::AGENT_READY)
        .map(|c| c.status.clone())
}

/// Waits until the landscaper reports the agent of environment `name` ready (it sees the
/// agent's heartbeat); `what` says what the test waits for.
async fn agent_ready(world: &World, name: &str, what: &str) {
    eventually(&format!("{what} ({name})"), || async {
        agent_condition(world, name).await == Some(ConditionStatus::True)
    })
    .await;
}

/// The `TargetReady` condition of environment `name` once its reason is `reason`; `what` says
/// what the test waits for.
async fn target_condition_with(world: &World, name: &str, reason: &str, what: &str) -> Condition {
    eventually(what, || async {
        target_condition(world, name)
            .await
            .is_some_and(|c| c.reason == reason)
    })
    .await;
    target_condition(world, name)
        .await
        .expect("the condition just seen")
}

async fn target_condition(world: &World, name: &str) -> Option<Condition> {
    let environment = environment(world, name).await?;
    find_condition(&environment.status?.conditions, conditions::TARGET_READY).cloned()
}

async fn target_access_kubeconfig(world: &World, name: &str) -> Option<String> {
    let secrets: Api<Secret> = Api::namespaced(world.fenced_cluster().client(), "ls-system");
    let secret = secrets
        .get_opt(&format!("{name}-target-access"))
        .await
        .unwrap()?;
    Some(String::from_utf8(secret.data?.get("kubeconfig")?.0.clone()).unwrap())
}

/// A world where environment `name` was registered once, without a running agent, and the
/// landscaper made its Target.
async fn registered_once(name: &str) -> World {
    let world = World::start().await;
    world
        .agent(world.agent_settings(name))
        .await
        .register()
        .await
        .unwrap();
    eventually(&format!("Target {name} exists"), || async {
        target(&world, name).await.is_some()
    })
    .await;
    world
}

#[tokio::test]
async fn agent_registers_environment_and_landscaper_creates_target() {
    let world = World::start().await;
    let (_stop, _task) = spawn_agent(world.agent(world.agent_settings("default")).await);

    eventually("the landscaper created Target default", || async {
        target(&world, "default").await.is_some()
    })
    .await;
    agent_ready(&world, "default", "the agent reports its heartbeat").await;

    let environment = environment(&world, "default").await.unwrap();
    let mut held = environment.metadata.finalizers.clone().unwrap();
    held.sort();
    assert_eq!(
        held,
        vec![
            finalizers::AGENT.to_owned(),
            finalizers::DEPLOYER_MANAGEMENT.to_owned()
        ]
    );
    assert_eq!(environment.spec.namespace, "ls-system");
    let landscaper = &environment.spec.landscaper_cluster_config;
    assert_eq!(
        landscaper.host,
        world.landscaper_cluster().url().trim_end_matches('/')
    );
    assert!(
        landscaper.ca_data.is_some(),
        "the landscaper cluster's CA is handed to deployers"
    );
    let host_target = &environment.spec.host_target;
    assert_eq!(
        host_target.type_,
        "landscaper.gardener.cloud/kubernetes-cluster"
    );
    assert_eq!(
        host_target.annotations.as_ref().unwrap()[annotations::ENVIRONMENT],
        "default"
    );
    let secret_ref = host_target.secret_ref.as_ref().unwrap();
    assert_eq!(
        (
            secret_ref.name.as_str(),
            secret_ref.namespace.as_deref(),
            secret_ref.key.as_deref()
        ),
        (
            "default-target-access",
            Some("ls-system"),
            Some("kubeconfig")
        )
    );
    let selector = &environment.spec.target_selectors[0].annotations[0];
    assert_eq!(
        (selector.key.as_str(), selector.values.as_slice()),
        (annotations::ENVIRONMENT, ["default".to_owned()].as_slice())
    );
    assert_eq!(
        environment
            .status
            .as_ref()
            .unwrap()
            .agent
            .as_ref()
            .unwrap()
            .version
            .as_deref(),
        Some("v0.0.0-test")
    );

    let target = target(&world, "default").await.unwrap();
    assert_eq!(target.spec.type_, host_target.type_);
    assert_eq!(target.spec.secret_ref, host_target.secret_ref);
    assert_eq!(
        target.metadata.annotations.as_ref().unwrap()[annotations::ENVIRONMENT],
        "default"
    );
    let owner = &target.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("Environment", "default", Some(true))
    );

    // The host cluster holds the deployer identity, and the credentials never left it.
    let fenced = world.fenced_cluster().client();
    Api::<ServiceAccount>::namespaced(fenced.clone(), "ls-system")
        .get("deployer-default")
        .await
        .unwrap();
    let role = Api::<ClusterRole>::all(fenced.clone())
        .get("landscaper:agent:default:deployer")
        .await
        .unwrap();
    assert_eq!(role.rules.unwrap()[0].verbs, vec!["*".to_owned()]);
    let binding = Api::<ClusterRoleBinding>::all(fenced.clone())
        .get("landscaper:agent:default:deployer")
        .await
        .unwrap();
    assert_eq!(binding.subjects.unwrap()[0].name, "deployer-default");
    let landscaper_secrets: Api<Secret> =
        Api::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE);
    assert!(
        landscaper_secrets
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .is_empty(),
        "no Secret reaches the landscaper cluster"
    );

    // The token in the kubeconfig authenticates as the deployer ServiceAccount, not the agent.
    let kubeconfig = target_access_kubeconfig(&world, "default").await.unwrap();
    let token = token_of_kubeconfig(&kubeconfig).unwrap();
    let review = Api::<SelfSubjectReview>::all(world.fenced_cluster().client_as(&token))
        .create(&PostParams::default(), &Default::default())
        .await
        .unwrap();
    let user = review.status.unwrap().user_info.unwrap();
    assert_eq!(
        user.username.as_deref(),
        Some("system:serviceaccount:ls-system:deployer-default")
    );
    let lifetime = TokenLifetime::of(&token).unwrap();
    assert_eq!(
        lifetime.expires.duration_since(lifetime.issued).as_secs(),
        3600,
        "short-lived token"
    );
}

#[tokio::test]
async fn token_renewal_replaces_the_token_before_expiry() {
    let world = World::start().await;
    let settings = world.agent_settings("renew");
    let agent = world.agent(settings.clone()).await;
    let first = agent.register().await.unwrap();
    let old =
        token_of_kubeconfig(&target_access_kubeconfig(&world, "renew").await.unwrap()).unwrap();

    let host = world.access(world.fenced_cluster(), None).await;
    let names = Names::new("renew");
    let registration = HostRegistration {
        client: &host.client,
        endpoint: &host.endpoint,
        names: &names,
        namespace: "ls-system",
        token_lifetime: settings.token_lifetime,
    };
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let renewed = registration.renew_token().await.unwrap();
    let new =
        token_of_kubeconfig(&target_access_kubeconfig(&world, "renew").await.unwrap()).unwrap();
    assert_ne!(old, new);
    assert!(renewed.issued > first.issued);
    assert!(
        first.renew_at() < first.expires,
        "renewal is due before expiry"
    );
    // Both tokens are valid ServiceAccount tokens of the deployer identity.
    let review = Api::<SelfSubjectReview>::all(world.fenced_cluster().client_as(&new))
        .create(&PostParams::default(), &Default::default())
        .await
        .unwrap();
    assert_eq!(
        review
            .status
            .unwrap()
            .user_info
            .unwrap()
            .username
            .as_deref(),
        Some("system:serviceaccount:ls-system:deployer-renew")
    );
}

#[tokio::test]
async fn the_token_is_renewed_while_the_landscaper_cannot_be_reached() {
    let world = World::start().await;
    let agent = world.agent(world.agent_settings("outage")).await;
    let mut lifetime = agent.register().await.unwrap();
    let old =
        token_of_kubeconfig(&target_access_kubeconfig(&world, "outage").await.unwrap()).unwrap();
    // Renewal is due, and the landscaper answers every request with an error.
    lifetime.expires = lifetime.issued;
    world
        .landscaper_cluster()
        .faults()
        .fail_next(1000, Matcher::any(), Fault::InternalError);
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let beat = agent.tick(&mut lifetime).await;
    world.landscaper_cluster().faults().clear();
    assert!(beat.is_err(), "the heartbeat failed: {beat:?}");
    let new =
        token_of_kubeconfig(&target_access_kubeconfig(&world, "outage").await.unwrap()).unwrap();
    // Compared without printing: tokens stay out of test output too.
    assert!(old != new, "the host's token was renewed all the same");
    assert!(lifetime.expires > lifetime.issued, "{lifetime:?}");
}

#[tokio::test]
async fn agent_restart_makes_no_writes() {
    let world = World::start().await;
    let settings = world.agent_settings("steady");
    world
        .agent(settings.clone())
        .await
        .register()
        .await
        .unwrap();
    let user = World::agent_user("steady");
    let fenced_writes = world.fenced_cluster().counters().writes(Some(&user));
    let landscaper_writes = world.landscaper_cluster().counters().writes(Some(&user));
    assert!(
        fenced_writes >= 5 && landscaper_writes >= 1,
        "the first start registered"
    );

    world.agent(settings).await.register().await.unwrap();

    assert_eq!(
        world.fenced_cluster().counters().writes(Some(&user)),
        fenced_writes,
        "restart wrote to the fenced cluster"
    );
    assert_eq!(
        world.landscaper_cluster().counters().writes(Some(&user)),
        landscaper_writes,
        "restart wrote to the landscaper cluster"
    );
}

#[tokio::test]
async fn deleted_target_is_recreated_by_the_landscaper() {
    let world = registered_once("repair").await;
    let targets: Api<Target> = Api::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE);
    let uid = targets.get("repair").await.unwrap().metadata.uid;
    targets
        .delete("repair", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the landscaper recreated Target repair", || async {
        target(&world, "repair")
            .await
            .is_some_and(|t| t.metadata.uid != uid)
    })
    .await;
}

#[tokio::test]
async fn labels_and_annotations_the_environment_drops_leave_its_target() {
    let world = registered_once("tidy").await;
    let client = world.landscaper_cluster().client();
    let targets: Api<Target> = Api::namespaced(client.clone(), LS_NAMESPACE);
    // Someone else's label on the Target, which the landscaper must keep.
    targets
        .patch(
            "tidy",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"team": "blue"}}})),
        )
        .await
        .unwrap();
    let environments: Api<Environment> = Api::all(client);
    let set_host_target_metadata = |labels: Value, annotations: Value| {
        let environments = environments.clone();
        async move {
            environments
                .patch(
                    "tidy",
                    &PatchParams::default(),
                    &Patch::Merge(json!({"spec": {"hostTarget": {
                        "labels": labels, "annotations": annotations}}})),
                )
                .await
                .unwrap();
        }
    };
    let label = |t: &Target, key: &str| t.labels().get(key).cloned();
    let annotation = |t: &Target, key: &str| t.annotations().get(key).cloned();

    set_host_target_metadata(json!({"tier": "one"}), json!({"note": "hi"})).await;
    eventually(
        "the Target has the environment's new label and annotation",
        || async {
            target(&world, "tidy").await.is_some_and(|t| {
                label(&t, "tier").as_deref() == Some("one")
                    && annotation(&t, "note").as_deref() == Some("hi")
            })
        },
    )
    .await;

    set_host_target_metadata(json!({"tier": null}), json!({"note": null})).await;
    eventually(
        "the dropped label and annotation are gone from the Target",
        || async {
            target(&world, "tidy")
                .await
                .is_some_and(|t| label(&t, "tier").is_none() && annotation(&t, "note").is_none())
        },
    )
    .await;
    let kept = target(&world, "tidy").await.unwrap();
    assert_eq!(
        label(&kept, "team").as_deref(),
        Some("blue"),
        "{:?}",
        kept.metadata
    );
    assert_eq!(
        annotation(&kept, annotations::ENVIRONMENT).as_deref(),
        Some("tidy"),
        "{:?}",
        kept.metadata
    );
    assert_eq!(
        label(&kept, labels::DEPLOYER_ENVIRONMENT).as_deref(),
        Some("tidy"),
        "{:?}",
        kept.metadata
    );

    // A Target that is up to date is not written again: a change of the Environment that
    // leaves its host Target as it is, once reconciled (its observedGeneration), wrote none.
    let counters = world.landscaper_cluster().counters();
    let writes = counters.count(Some("patch"), Some("targets"), None);
    let touched = environments
        .patch(
            "tidy",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"namespace": "touched"}})),
        )
        .await
        .unwrap();
    let generation = touched.metadata.generation;
    eventually("the touched Environment is reconciled", || async {
        environments
            .get("tidy")
            .await
            .unwrap()
            .status
            .is_some_and(|status| status.observed_generation == generation)
    })
    .await;
    assert_eq!(
        counters.count(Some("patch"), Some("targets"), None),
        writes,
        "an up-to-date Target was written again"
    );
}

#[tokio::test]
async fn the_landscaper_keeps_its_finalizer_until_the_target_is_gone() {
    let world = registered_once("held").await;
    let client = world.landscaper_cluster().client();
    let targets: Api<Target> = Api::namespaced(client.clone(), LS_NAMESPACE);
    let hold = |finalizers: Value| {
        let targets = targets.clone();
        async move {
            targets
                .patch(
                    "held",
                    &PatchParams::default(),
                    &Patch::Merge(json!({"metadata": {"finalizers": finalizers}})),
                )
                .await
                .unwrap();
        }
    };
    hold(json!(["example.com/hold"])).await;
    let environments: Api<Environment> = Api::all(client);
    environments
        .delete("held", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the landscaper deletes the Target", || async {
        target(&world, "held")
            .await
            .is_some_and(|t| t.metadata.deletion_timestamp.is_some())
    })
    .await;
    let landscaper_finalizer = || async {
        environment(&world, "held").await.is_some_and(|e| {
            e.finalizers()
                .iter()
                .any(|f| f == finalizers::DEPLOYER_MANAGEMENT)
        })
    };
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    assert!(
        landscaper_finalizer().await,
        "the finalizer went while the Target still exists"
    );

    hold(json!(null)).await;
    eventually("the finalizer goes with the Target", || async {
        target(&world, "held").await.is_none() && !landscaper_finalizer().await
    })
    .await;
}

#[tokio::test]
async fn stopped_agent_turns_unknown_and_ready_again_when_restarted() {
    let world = World::start().await;
    let settings = world.agent_settings("beat");
    let (stop, task) = spawn_agent(world.agent(settings.clone()).await);
    agent_ready(&world, "beat", "the agent is ready").await;
    stop.send(()).unwrap();
    task.await.unwrap();
    eventually(
        "the landscaper marks the agent Unknown after 5 missed periods",
        || async { agent_condition(&world, "beat").await == Some(ConditionStatus::Unknown) },
    )
    .await;
    let condition = find_condition(
        &environment(&world, "beat")
            .await
            .unwrap()
            .status
            .unwrap()
            .conditions,
        conditions::AGENT_READY,
    )
    .cloned()
    .unwrap();
    assert_eq!(condition.reason, "HeartbeatMissed");
    let (_stop, _task) = spawn_agent(world.agent(settings).await);
    agent_ready(&world, "beat", "the restarted agent is ready again").await;
}

#[tokio::test]
async fn the_landscaper_reads_the_lease_where_the_agent_writes_it() {
    let world = World::start().await;
    // The agent's landscaperNamespace is not the landscaper's deployerManagement.namespace.
    world
        .create_namespace(world.landscaper_cluster(), "agent-leases")
        .await;
    let mut settings = world.agent_settings("split");
    settings.landscaper_namespace = "agent-leases".to_owned();
    let (_stop, _task) = spawn_agent(world.agent(settings).await);
    agent_ready(&world, "split", "the landscaper sees the agent's heartbeat").await;
    // It stays so, heartbeat after heartbeat (periods of 1 s).
    for _ in 0..30 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let environment = environment(&world, "split").await.unwrap();
        let condition = find_condition(
            &environment.status.unwrap().conditions,
            conditions::AGENT_READY,
        )
        .cloned()
        .unwrap();
        assert_eq!(condition.status, ConditionStatus::True, "{condition:?}");
        assert!(
            condition.message.contains("agent-leases/split"),
            "{}",
            condition.message
        );
    }
    let leases =
        |namespace| Api::<Lease>::namespaced(world.landscaper_cluster().client(), namespace);
    assert!(
        leases("agent-leases")
            .get_opt("split")
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        leases(LS_NAMESPACE)
            .get_opt("split")
            .await
            .unwrap()
            .is_none()
    );
}

/// Runs the agent's clean uninstall of environment `name` as an admin of both clusters, with
/// the uninstall's timeout (`timeout_secs`) and `force`.
async fn clean_up(
    world: &World,
    name: &str,
    timeout_secs: u64,
    force: bool,
) -> Result<(), CleanupError> {
    let host = world.access(world.fenced_cluster(), None).await;
    let landscaper = world.landscaper_cluster().client();
    let names = Names::new(name);
    Cleanup {
        landscaper: &landscaper,
        host: HostRegistration {
            client: &host.client,
            endpoint: &host.endpoint,
            names: &names,
            namespace: "ls-system",
            token_lifetime: std::time::Duration::from_secs(3600),
        },
        landscaper_namespace: LS_NAMESPACE,
        names: &names,
        timeout: std::time::Duration::from_secs(timeout_secs),
        force,
    }
    .run()
    .await
}

async fn nothing_left(world: &World, name: &str) {
    assert!(
        environment(world, name).await.is_none(),
        "Environment {name} remains"
    );
    eventually("the Target is gone", || async {
        target(world, name).await.is_none()
    })
    .await;
    let fenced = world.fenced_cluster().client();
    let account = format!("deployer-{name}");
    let secret = format!("{name}-target-access");
    let role = format!("landscaper:agent:{name}:deployer");
    for (what, remains) in [
        (
            "ServiceAccount",
            exists(
                &Api::<ServiceAccount>::namespaced(fenced.clone(), "ls-system"),
                &account,
            )
            .await,
        ),
        (
            "Secret",
            exists(
                &Api::<Secret>::namespaced(fenced.clone(), "ls-system"),
                &secret,
            )
            .await,
        ),
        (
            "ClusterRole",
            exists(&Api::<ClusterRole>::all(fenced.clone()), &role).await,
        ),
        (
            "ClusterRoleBinding",
            exists(&Api::<ClusterRoleBinding>::all(fenced), &role).await,
        ),
    ] {
        assert!(!remains, "the agent's {what} of {name} remains");
    }
}

#[tokio::test]
async fn cleanup_removes_everything_and_leaves_other_agents_working() {
    let world = World::start().await;
    let (_stop_b, _task_b) = spawn_agent(world.agent(world.agent_settings("b")).await);
    let (stop_a, task_a) = spawn_agent(world.agent(world.agent_settings("a")).await);
    for name in ["a", "b"] {
        agent_ready(&world, name, "both agents are ready").await;
        eventually("both Targets exist", || async {
            target(&world, name).await.is_some()
        })
        .await;
    }
    stop_a.send(()).unwrap();
    task_a.await.unwrap();

    clean_up(&world, "a", 30, false).await.unwrap();
    nothing_left(&world, "a").await;

    // Environment b is untouched and keeps beating.
    let before = environment(&world, "b")
        .await
        .unwrap()
        .status
        .unwrap()
        .agent
        .unwrap()
        .last_heartbeat_time;
    eventually("agent b keeps renewing its heartbeat", || async {
        environment(&world, "b")
            .await
            .unwrap()
            .status
            .unwrap()
            .agent
            .unwrap()
            .last_heartbeat_time
            != before
    })
    .await;
    assert!(target_access_kubeconfig(&world, "b").await.is_some());
    assert_eq!(
        agent_condition(&world, "b").await,
        Some(ConditionStatus::True)
    );
}

#[tokio::test]
async fn forced_cleanup_finishes_when_the_landscaper_is_down() {
    let mut world = World::start().await;
    world
        .agent(world.agent_settings("orphan"))
        .await
        .register()
        .await
        .unwrap();
    eventually("the landscaper took the environment", || async {
        environment(&world, "orphan")
            .await
            .is_some_and(|e| e.metadata.finalizers.unwrap_or_default().len() == 2)
    })
    .await;
    world.stop_landscaper().await;

    let error = clean_up(&world, "orphan", 1, false)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("still has finalizers") && error.contains(finalizers::DEPLOYER_MANAGEMENT),
        "{error}"
    );

    // Forced, it ends after its own 2 s timeout instead of waiting for the landscaper; the
    // generous bound only turns a hang into a failure.
    tokio::time::timeout(
        std::time::Duration::from_secs(60),
        clean_up(&world, "orphan", 2, true),
    )
    .await
    .expect("the forced cleanup ends")
    .unwrap();
    assert!(environment(&world, "orphan").await.is_none());
    let secrets = Api::<Secret>::namespaced(world.fenced_cluster().client(), "ls-system");
    assert!(!exists(&secrets, "orphan-target-access").await);
}

#[tokio::test]
async fn environment_of_another_agent_is_not_taken_over() {
    let world = World::start().await;
    world
        .agent(world.agent_settings("shared"))
        .await
        .register()
        .await
        .unwrap();
    let environments: Api<Environment> = Api::all(world.landscaper_cluster().client());
    // Another agent's annotation; retried because the landscaper writes concurrently.
    eventually("the Environment is marked as another agent's", || async {
        let mut environment = environments.get("shared").await.unwrap();
        environment.metadata.annotations.as_mut().unwrap().insert(
            landscaper_agent::registration::environment::HOST_CLUSTER_ANNOTATION.to_owned(),
            "some-other-cluster".to_owned(),
        );
        environments
            .replace("shared", &PostParams::default(), &environment)
            .await
            .is_ok()
    })
    .await;

    let error = world
        .agent(world.agent_settings("shared"))
        .await
        .register()
        .await
        .unwrap_err();
    assert!(
        matches!(error, RegistrationError::OwnedByAnother { .. }),
        "{error}"
    );
    let message = error.to_string();
    assert!(
        message.contains("Environment shared")
            && message.contains("some-other-cluster")
            && message.contains("refusing to take it over"),
        "{message}"
    );
}

#[tokio::test]
async fn unreachable_landscaper_is_retried_not_fatal() {
    let world = World::start().await;
    let mut settings = world.agent_settings("far");
    let unreachable = world.dir.path().join("unreachable.yaml");
    let yaml = world
        .landscaper_cluster()
        .kubeconfig_yaml()
        .replace(&world.landscaper_cluster().url(), "https://127.0.0.1:1");
    std::fs::write(&unreachable, yaml).unwrap();
    settings.landscaper_kubeconfig = unreachable;
    let agent = world.agent(settings).await;
    let error = agent.register().await.unwrap_err();
    assert!(error.is_transient(), "{error}");
    assert!(error.to_string().contains("Environment far"), "{error}");
    // `run` keeps retrying instead of exiting; it stops cleanly on shutdown.
    let (stop, task) = spawn_agent(agent);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!task.is_finished());
    stop.send(()).unwrap();
    task.await.unwrap();
}

#[tokio::test]
async fn a_target_of_the_same_name_that_is_not_the_environments_is_left_alone() {
    let world = World::start().await;
    let targets = Api::<Target>::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE);
    let theirs: Target = serde_json::from_value(serde_json::json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "Target",
        "metadata": {"name": "prod", "namespace": LS_NAMESPACE},
        "spec": {"type": "landscaper.gardener.cloud/kubernetes-cluster",
                 "config": {"kubeconfig": "someone else's"}}
    }))
    .unwrap();
    targets
        .create(&PostParams::default(), &theirs)
        .await
        .unwrap();
    let (stop, task) = spawn_agent(world.agent(world.agent_settings("prod")).await);
    let condition =
        target_condition_with(&world, "prod", "TargetConflict", "the conflict is reported").await;
    assert_eq!(condition.status, ConditionStatus::False);
    assert!(
        condition.message.contains("Target ls-system/prod exists")
            && condition.message.contains("no controller"),
        "{}",
        condition.message
    );
    // The agent reports itself ready with its first heartbeat, which may come after the
    // landscaper's first look.
    agent_ready(&world, "prod", "the heartbeat is still checked").await;
    let kept = target(&world, "prod").await.unwrap();
    assert_eq!(kept.spec, theirs.spec);
    assert!(kept.metadata.owner_references.is_none());

    // Removing the environment leaves their Target too.
    stop.send(()).unwrap();
    task.await.unwrap();
    clean_up(&world, "prod", 30, false).await.unwrap();
    assert!(environment(&world, "prod").await.is_none());
    assert_eq!(target(&world, "prod").await.unwrap().spec, theirs.spec);
}

#[tokio::test]
async fn a_target_the_landscaper_cannot_write_is_reported_and_the_heartbeat_still_checked() {
    let world = World::start().await;
    world.landscaper_cluster().faults().fail_next(
        1000,
        Matcher::any().verb("patch").resource("targets"),
        Fault::InternalError,
    );
    let (_stop, _task) = spawn_agent(world.agent(world.agent_settings("stuck")).await);
    let failure =
        target_condition_with(&world, "stuck", "TargetError", "the failure is reported").await;
    assert!(
        failure.message.contains("creating its Target"),
        "{}",
        failure.message
    );
    agent_ready(&world, "stuck", "the heartbeat is checked all the same").await;
    world.landscaper_cluster().faults().clear();
    target_condition_with(
        &world,
        "stuck",
        "TargetReconciled",
        "the Target is made once the landscaper may write it",
    )
    .await;
}

#[tokio::test]
async fn cleanup_waits_through_a_failed_read_of_the_environment() {
    let world = World::start().await;
    let (stop, task) = spawn_agent(world.agent(world.agent_settings("flaky")).await);
    agent_ready(&world, "flaky", "the agent is ready").await;
    stop.send(()).unwrap();
    task.await.unwrap();
    world.landscaper_cluster().faults().fail_next(
        1,
        Matcher::any()
            .verb("get")
            .resource("environments")
            .name("flaky"),
        Fault::InternalError,
    );
    clean_up(&world, "flaky", 30, false).await.unwrap();
    nothing_left(&world, "flaky").await;
}

/// The status code and body of `GET path` on the probe server at `address`.
async fn probe(address: std::net::SocketAddr, path: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    let status = answer.split(' ').nth(1).unwrap().parse().unwrap();
    let body = answer
        .split("\r\n\r\n")
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    (status, body)
}

#[tokio::test]
async fn probes_say_live_while_registration_fails_and_ready_once_registered() {
    let world = World::start().await;
    world.landscaper_cluster().faults().fail_next(
        1000,
        Matcher::any().verb("create").resource("environments"),
        Fault::InternalError,
    );
    let agent = world.agent(world.agent_settings("probed")).await;
    let listener = health::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let health = agent.health();
    let probes = tokio::spawn(health::serve(listener, health.clone()));
    let (_stop, _task) = spawn_agent(agent);

    // Backoff 1 s, then 2 s: the third attempt comes about 3 s after the start.
    eventually("three registration attempts failed", || async {
        world
            .landscaper_cluster()
            .counters()
            .count(Some("create"), Some("environments"), None)
            >= 3
    })
    .await;
    assert!(
        health.quiet_for() < std::time::Duration::from_secs(2),
        "each failed attempt is a round of the loop: quiet for {:?}",
        health.quiet_for()
    );
    let (status, body) = probe(address, "/readyz").await;
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("not registered"), "{body}");
    assert_eq!(
        probe(address, "/healthz").await.0,
        200,
        "an unreachable landscaper is no reason to restart"
    );

    world.landscaper_cluster().faults().clear();
    eventually("the agent is ready once registered", || async {
        probe(address, "/readyz").await.0 == 200
    })
    .await;
    assert!(environment(&world, "probed").await.is_some());
    assert_eq!(probe(address, "/healthz").await, (200, "ok\n".to_owned()));
    let (status, metrics) = probe(address, "/metrics").await;
    assert_eq!(status, 200, "the probes' address serves the metrics too");
    assert!(
        metrics.contains("# TYPE controller_runtime_reconcile_total counter"),
        "{metrics}"
    );
    probes.abort();
}
