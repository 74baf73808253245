//! DeployerRegistrations × Environments: the landscaper makes each pair's ServiceAccount, RBAC,
//! Target and Installation, triggers installations only when something changed, reports
//! dependency cycles, and removes pairs in dependency order.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use landscaper_api::constants::{deploy_item_types, finalizers, labels};
use landscaper_api::core::{
    DeployerRegistration, DeployerRegistrationStatus, Environment, Execution, Installation, Target,
};
use landscaper_e2e::blueprints::blueprint_filesystem;
use landscaper_e2e::deploy_items::{mock_item, start_job};
use landscaper_e2e::registrations::{
    create_environment, pair_imports, registration, registration_with_template,
};
use landscaper_e2e::{LS_NAMESPACE, World, eventually};
use serde_json::{Value, json};

/// A world with these environments, and the API of registrations.
async fn world_with(environments: &[&str]) -> (World, Api<DeployerRegistration>) {
    let world = World::start().await;
    for environment in environments {
        create_environment(&world, environment).await;
    }
    let registrations = Api::all(world.landscaper_cluster().client());
    (world, registrations)
}

/// A world with these environments and the registration `mock` serving mock items.
async fn world_with_mock(environments: &[&str]) -> (World, Api<DeployerRegistration>) {
    let (world, registrations) = world_with(environments).await;
    register_mock(&registrations).await;
    (world, registrations)
}

/// Registers `mock`, serving mock items.
async fn register_mock(registrations: &Api<DeployerRegistration>) {
    register(registrations, "mock", &[deploy_item_types::MOCK], json!({})).await;
}

/// The status of the registration `name` (empty before the landscaper wrote one).
async fn status_of(
    registrations: &Api<DeployerRegistration>,
    name: &str,
) -> DeployerRegistrationStatus {
    registrations
        .get(name)
        .await
        .expect("read")
        .status
        .unwrap_or_default()
}

/// Waits until a Warning Event with `reason` is published, with `note` when one is given.
async fn wait_for_warning(world: &World, reason: &str, note: Option<&str>) {
    let events: Api<k8s_openapi::api::events::v1::Event> =
        Api::all(world.landscaper_cluster().client());
    eventually(&format!("a {reason} event is published"), || async {
        events
            .list(&Default::default())
            .await
            .expect("events")
            .items
            .iter()
            .any(|event| {
                event.reason.as_deref() == Some(reason)
                    && event.type_.as_deref() == Some("Warning")
                    && note.is_none_or(|note| event.note.as_deref() == Some(note))
            })
    })
    .await;
}

/// Changes the registration's `importDataMappings.values`, as a user upgrading its deployer.
async fn set_values(registrations: &Api<DeployerRegistration>, name: &str, values: Value) {
    registrations
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(
                json!({ "spec": { "installationTemplate": { "importDataMappings": { "values": values } } } }),
            ),
        )
        .await
        .expect("registration changed");
}

/// Creates the registration.
async fn register(
    registrations: &Api<DeployerRegistration>,
    name: &str,
    types: &[&str],
    values: Value,
) {
    registrations
        .create(&PostParams::default(), &registration(name, types, values))
        .await
        .expect("registration created");
}

fn installations(world: &World) -> Api<Installation> {
    Api::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE)
}

async fn wait_for_installation(world: &World, name: &str) -> Installation {
    let api = installations(world);
    eventually(&format!("Installation {name} exists"), || async {
        api.get_opt(name).await.expect("read").is_some()
    })
    .await;
    api.get(name).await.expect("read")
}

async fn wait_gone<K>(api: &Api<K>, name: &str)
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    eventually(&format!("{name} is gone"), || async {
        api.get_opt(name).await.expect("read").is_none()
    })
    .await;
}

/// The job the pair's Installation last started: the installation controller consumes the
/// reconcile annotation the registration controller sets and starts a job.
async fn job_id(world: &World, name: &str) -> Option<String> {
    installations(world)
        .get(name)
        .await
        .expect("read")
        .status
        .and_then(|status| status.job_id)
}

/// Waits until the pair's Installation started a job other than `previous`; returns it.
async fn next_job(world: &World, name: &str, previous: Option<&str>) -> String {
    eventually(&format!("{name} starts a new job"), || async {
        let current = job_id(world, name).await;
        current.is_some() && current.as_deref() != previous
    })
    .await;
    job_id(world, name).await.expect("a job")
}

#[tokio::test]
async fn a_registration_is_installed_into_every_environment_with_access_of_its_own() {
    let (world, registrations) = world_with(&["edge", "core"]).await;
    register(
        &registrations,
        "mock",
        &[deploy_item_types::MOCK],
        json!({ "replicas": 2 }),
    )
    .await;

    for environment in ["edge", "core"] {
        let pair = format!("mock-{environment}");
        let installation = wait_for_installation(&world, &pair).await;
        assert_eq!(installation.labels()[labels::DEPLOYER_REGISTRATION], "mock");
        assert_eq!(
            installation.labels()[labels::DEPLOYER_ENVIRONMENT],
            environment
        );
        assert!(
            installation
                .finalizers()
                .contains(&finalizers::DEPLOYER_MANAGEMENT.to_owned())
        );
        next_job(&world, &pair, None).await;
        let mappings = installation.spec.import_data_mappings.clone().unwrap();
        assert_eq!(mappings["identity"], pair.as_str());
        assert_eq!(
            mappings["releaseNamespace"],
            format!("{environment}-deployers").as_str()
        );
        assert_eq!(mappings["values"], json!({ "replicas": 2 }));
        assert_eq!(
            mappings["targetSelectors"][0]["annotations"][0]["values"][0],
            environment
        );
        let targets = installation.spec.imports.clone().unwrap().targets.unwrap();
        assert_eq!(
            targets[0].target.as_deref(),
            Some(format!("#{environment}").as_str())
        );
        assert_eq!(
            targets[1].target.as_deref(),
            Some(format!("#{pair}").as_str())
        );

        let client = world.landscaper_cluster().client();
        Api::<ServiceAccount>::namespaced(client.clone(), LS_NAMESPACE)
            .get(&pair)
            .await
            .expect("the pair's ServiceAccount");
        let role_name = format!("landscaper:deployer:{pair}");
        Api::<ClusterRole>::all(client.clone())
            .get(&role_name)
            .await
            .expect("its ClusterRole");
        let binding = Api::<ClusterRoleBinding>::all(client.clone())
            .get(&role_name)
            .await
            .expect("its ClusterRoleBinding");
        assert_eq!(binding.subjects.unwrap()[0].name, pair);
        let target = Api::<Target>::namespaced(client.clone(), LS_NAMESPACE)
            .get(&pair)
            .await
            .expect("its Target");
        let secret_ref = target.spec.secret_ref.expect("the Target names its Secret");

        // The Target's kubeconfig is the pair's ServiceAccount in the landscaper cluster, and
        // RBAC gives it the deploy items and nothing cluster-admin.
        let secret = Api::<Secret>::namespaced(client.clone(), LS_NAMESPACE)
            .get(&secret_ref.name)
            .await
            .expect("its access Secret");
        let kubeconfig = &secret.data.unwrap()[secret_ref.key.as_deref().unwrap()];
        let kubeconfig: Kubeconfig =
            serde_yaml_ng::from_slice(&kubeconfig.0).expect("a kubeconfig");
        let config =
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .expect("a usable kubeconfig");
        let as_pair = kube::Client::try_from(config).expect("a client");
        Api::<landscaper_api::core::DeployItem>::all(as_pair.clone())
            .list(&Default::default())
            .await
            .expect("the deployer can list deploy items");
        let denied = Api::<DeployerRegistration>::all(as_pair)
            .list(&Default::default())
            .await
            .expect_err("the deployer cannot read registrations");
        assert!(matches!(denied, kube::Error::Api(status) if status.code == 403));
    }

    let registration = registrations.get("mock").await.expect("read");
    eventually("the status lists both environments", || async {
        let status = status_of(&registrations, "mock").await;
        status.environments.len() == 2 && status.environments_ready.as_deref() == Some("0/2")
    })
    .await;
    assert!(
        registration
            .finalizers()
            .contains(&finalizers::DEPLOYER_MANAGEMENT.to_owned())
    );

    // A third environment registered later gets the deployer without touching the registration.
    create_environment(&world, "late").await;
    wait_for_installation(&world, "mock-late").await;
}

#[tokio::test]
async fn installations_are_triggered_only_when_their_source_changed_and_a_restart_writes_nothing() {
    let (mut world, registrations) = world_with_mock(&["edge", "core"]).await;
    let mut jobs = Vec::new();
    for pair in ["mock-edge", "mock-core"] {
        wait_for_installation(&world, pair).await;
        jobs.push(next_job(&world, pair, None).await);
    }
    // The jobs end (Failed: the test's component is not in any registry) and the registration
    // reports their phases.
    eventually("the jobs ended and the status shows them", || async {
        let mut settled = true;
        for pair in ["mock-edge", "mock-core"] {
            let status = installations(&world).get(pair).await.expect("read").status;
            settled &= status.is_some_and(|s| s.job_id.is_some() && s.job_id == s.job_id_finished);
        }
        let status = status_of(&registrations, "mock").await;
        settled
            && status.environments.len() == 2
            && status
                .environments
                .iter()
                .all(|entry| entry.phase.as_deref() == Some("Failed"))
    })
    .await;

    // A restart with nothing changed writes no pair object and starts no job.
    world.stop_landscaper().await;
    world.landscaper_cluster().counters().reset();
    world.start_landscaper().await;
    let counters = world.landscaper_cluster().counters();
    eventually(
        "the restarted landscaper has listed the registrations",
        || async {
            counters.count(Some("list"), Some("deployerregistrations"), None) >= 1
                && counters.count(Some("list"), Some("installations"), None) >= 1
        },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let pair_kinds = [
        "serviceaccounts",
        "serviceaccounts/token",
        "clusterroles",
        "clusterrolebindings",
        "secrets",
        "targets",
        "installations",
        "deployerregistrations",
        "deployerregistrations/status",
    ];
    let pair_writes: Vec<_> = counters
        .snapshot()
        .into_iter()
        .filter(|(key, _)| {
            pair_kinds.contains(&key.resource.as_str())
                && ["create", "update", "patch", "delete"].contains(&key.verb.as_str())
        })
        .collect();
    assert!(
        pair_writes.is_empty(),
        "writes after a restart: {pair_writes:?}"
    );
    for (pair, job) in ["mock-edge", "mock-core"].into_iter().zip(&jobs) {
        assert_eq!(
            job_id(&world, pair).await.as_ref(),
            Some(job),
            "{pair} was not triggered again"
        );
    }

    // Changing the registration's values upgrades every environment once.
    set_values(&registrations, "mock", json!({ "replicas": 3 })).await;
    let mut upgraded = Vec::new();
    for (pair, job) in ["mock-edge", "mock-core"].into_iter().zip(&jobs) {
        upgraded.push(next_job(&world, pair, Some(job)).await);
        let installation = installations(&world).get(pair).await.expect("read");
        assert_eq!(
            installation.spec.import_data_mappings.as_ref().unwrap()["values"],
            json!({ "replicas": 3 })
        );
    }
    // A change that does not touch the template (a label) starts nothing.
    registrations
        .patch(
            "mock",
            &PatchParams::default(),
            &Patch::Merge(json!({ "metadata": { "labels": { "team": "platform" } } })),
        )
        .await
        .expect("labelled");
    tokio::time::sleep(Duration::from_secs(1)).await;
    for (pair, job) in ["mock-edge", "mock-core"].into_iter().zip(&upgraded) {
        assert_eq!(
            job_id(&world, pair).await.as_ref(),
            Some(job),
            "{pair} was not triggered by a label"
        );
    }
}

#[tokio::test]
async fn names_too_long_for_a_pair_are_a_status_message() {
    let long = "e".repeat(60);
    let (world, registrations) = world_with_mock(&[&long]).await;
    eventually("the registration reports the name", || async {
        let status = status_of(&registrations, "mock").await;
        status.environments.iter().any(|entry| {
            entry.environment == long
                && entry
                    .message
                    .as_deref()
                    .is_some_and(|m| m.contains("more than the 63"))
        })
    })
    .await;
    assert!(
        installations(&world)
            .list(&Default::default())
            .await
            .expect("list")
            .items
            .is_empty()
    );
}

/// An Execution for the pair's installation, as the installation controller would render it,
/// with items of the given type.
async fn execution_needing(world: &World, pair: &str, item_type: &str) {
    let execution: Execution = serde_json::from_value(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "Execution",
        "metadata": { "name": pair, "namespace": LS_NAMESPACE },
        "spec": { "deployItems": [{ "name": "deployer", "type": item_type, "config": {} }] },
    }))
    .expect("an execution");
    Api::<Execution>::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE)
        .create(&PostParams::default(), &execution)
        .await
        .expect("execution created");
}

#[tokio::test]
async fn a_dependency_cycle_is_reported_on_every_registration_in_it() {
    let (world, registrations) = world_with(&["edge"]).await;
    for (name, serves) in [
        ("manifest", deploy_item_types::MANIFEST),
        ("mock", deploy_item_types::MOCK),
    ] {
        register(&registrations, name, &[serves], json!({})).await;
    }
    wait_for_installation(&world, "manifest-edge").await;
    wait_for_installation(&world, "mock-edge").await;
    execution_needing(&world, "manifest-edge", deploy_item_types::MOCK).await;
    execution_needing(&world, "mock-edge", deploy_item_types::MANIFEST).await;
    for name in ["manifest", "mock"] {
        eventually(&format!("{name} reports the cycle"), || async {
            let status = status_of(&registrations, name).await;
            status.conditions.iter().any(|c| {
                c.type_ == "DependencyCycle" && c.message.contains("manifest → mock → manifest")
            })
        })
        .await;
    }
    wait_for_warning(&world, "DependencyCycle", None).await;
}

#[tokio::test]
async fn deleting_an_environment_removes_its_pairs_in_reverse_order_then_releases_it() {
    let (world, registrations) = world_with(&["edge"]).await;
    for (name, serves) in [
        ("manifest", deploy_item_types::MANIFEST),
        ("app", "example.com/app"),
    ] {
        register(&registrations, name, &[serves], json!({})).await;
    }
    wait_for_installation(&world, "manifest-edge").await;
    wait_for_installation(&world, "app-edge").await;
    // app's deployer is installed with manifest items, so it goes first; a finalizer of the
    // test holds it to see that manifest waits.
    execution_needing(&world, "app-edge", deploy_item_types::MANIFEST).await;
    installations(&world)
        .patch(
            "app-edge",
            &PatchParams::default(),
            &Patch::Merge(json!({ "metadata": { "finalizers": [finalizers::DEPLOYER_MANAGEMENT, "test.example.com/hold"] } })),
        )
        .await
        .expect("held");
    let environments: Api<Environment> = Api::all(world.landscaper_cluster().client());
    environments
        .delete("edge", &DeleteParams::default())
        .await
        .expect("deleted");
    eventually("app-edge is being deleted", || async {
        installations(&world)
            .get("app-edge")
            .await
            .expect("read")
            .metadata
            .deletion_timestamp
            .is_some()
    })
    .await;
    eventually("manifest reports what it waits for", || async {
        let status = status_of(&registrations, "manifest").await;
        status.environments.iter().any(|e| {
            e.message
                .as_deref()
                .is_some_and(|m| m.contains("waiting for app-edge to be removed first"))
        })
    })
    .await;
    let manifest = installations(&world)
        .get("manifest-edge")
        .await
        .expect("still there");
    assert!(
        manifest.metadata.deletion_timestamp.is_none(),
        "manifest waits for app"
    );

    installations(&world)
        .patch(
            "app-edge",
            &PatchParams::default(),
            &Patch::Merge(
                json!({ "metadata": { "finalizers": [finalizers::DEPLOYER_MANAGEMENT] } }),
            ),
        )
        .await
        .expect("released");
    wait_gone(&installations(&world), "app-edge").await;
    wait_gone(&installations(&world), "manifest-edge").await;
    let client = world.landscaper_cluster().client();
    wait_gone(
        &Api::<ServiceAccount>::namespaced(client.clone(), LS_NAMESPACE),
        "manifest-edge",
    )
    .await;
    wait_gone(
        &Api::<ClusterRole>::all(client.clone()),
        "landscaper:deployer:manifest-edge",
    )
    .await;
    wait_gone(
        &Api::<Target>::namespaced(client.clone(), LS_NAMESPACE),
        "edge",
    )
    .await;
    wait_gone(&environments, "edge").await;
    let remaining: Vec<String> = Api::<Secret>::namespaced(client, LS_NAMESPACE)
        .list(&Default::default())
        .await
        .expect("secrets")
        .items
        .iter()
        .map(|secret| secret.name_any())
        .collect();
    assert!(
        !remaining.iter().any(|name| name.contains("-edge-")),
        "{remaining:?}"
    );
}

#[tokio::test]
async fn deleting_a_registration_removes_its_pairs_everywhere() {
    let (world, registrations) = world_with_mock(&["edge", "core"]).await;
    wait_for_installation(&world, "mock-edge").await;
    wait_for_installation(&world, "mock-core").await;
    registrations
        .delete("mock", &DeleteParams::default())
        .await
        .expect("deleted");
    wait_gone(&installations(&world), "mock-edge").await;
    wait_gone(&installations(&world), "mock-core").await;
    wait_gone(&registrations, "mock").await;
    let client = world.landscaper_cluster().client();
    wait_gone(
        &Api::<Target>::namespaced(client.clone(), LS_NAMESPACE),
        "mock-edge",
    )
    .await;
    wait_gone(
        &Api::<ClusterRoleBinding>::all(client),
        "landscaper:deployer:mock-core",
    )
    .await;
}

#[tokio::test]
async fn a_renewed_pair_token_reaches_the_installation_and_installs_the_deployer_again() {
    let (world, _registrations) = world_with_mock(&["edge"]).await;
    let first = wait_for_installation(&world, "mock-edge").await;
    let imports = first.spec.imports.clone().unwrap_or_default();
    let kubeconfig_import = imports
        .data
        .unwrap_or_default()
        .into_iter()
        .find(|d| d.name == "landscaperClusterKubeconfig")
        .expect("the kubeconfig is imported from the pair's Secret");
    let secret_ref = kubeconfig_import.secret_ref.expect("a secretRef import");
    assert_eq!(
        (secret_ref.name.as_str(), secret_ref.key.as_deref()),
        ("mock-edge-landscaper-cluster", Some("kubeconfig"))
    );
    let job_of = |i: &Installation| i.status.as_ref().and_then(|s| s.job_id.clone());
    eventually("the first job ran", || async {
        job_of(&installations(&world).get("mock-edge").await.unwrap()).is_some()
    })
    .await;
    let first_job = job_of(&installations(&world).get("mock-edge").await.unwrap());

    // The token is due: the landscaper renews it and installs the deployer again with it.
    let secrets: Api<Secret> = Api::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE);
    let old = secrets
        .get("mock-edge-landscaper-cluster")
        .await
        .unwrap()
        .data;
    secrets
        .patch(
            "mock-edge-landscaper-cluster",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {
                "deployers.landscaper.gardener.cloud/token-renew-at": "2000-01-01T00:00:00Z",
            }}})),
        )
        .await
        .unwrap();
    eventually("a new token and a new job", || async {
        let renewed = secrets
            .get("mock-edge-landscaper-cluster")
            .await
            .unwrap()
            .data
            != old;
        let job = job_of(&installations(&world).get("mock-edge").await.unwrap());
        renewed && job.is_some() && job != first_job
    })
    .await;
}

/// A registration whose inline blueprint declares the pair's imports and renders with
/// `template` as its deploy execution.
fn inline_registration(name: &str, types: &[&str], template: &str) -> DeployerRegistration {
    let mut imports = pair_imports();
    imports.push(json!({"name": "values", "type": "data", "schema": {"type": "object"}}));
    let blueprint = blueprint_filesystem(json!({
        "imports": imports,
        "deployExecutions": [{"name": "default", "type": "GoTemplate", "template": template}],
    }));
    registration_with_template(
        name,
        types,
        json!({
            "blueprint": { "inline": { "filesystem": blueprint } },
            "importDataMappings": { "values": {} },
        }),
    )
}

/// The message of `registration`'s status entry for `environment`, if any.
async fn current_message(
    registrations: &Api<DeployerRegistration>,
    registration: &str,
    environment: &str,
) -> Option<String> {
    status_of(registrations, registration)
        .await
        .environments
        .into_iter()
        .find(|entry| entry.environment == environment)
        .and_then(|entry| entry.message)
}

/// The message of `registration`'s status entry for `environment`, once it has one.
async fn entry_message(
    registrations: &Api<DeployerRegistration>,
    registration: &str,
    environment: &str,
) -> String {
    eventually(
        &format!("{registration} reports on environment {environment}"),
        || async {
            current_message(registrations, registration, environment)
                .await
                .is_some()
        },
    )
    .await;
    current_message(registrations, registration, environment)
        .await
        .unwrap_or_default()
}

#[tokio::test]
async fn bad_input_is_a_clear_status_message_and_makes_nothing() {
    let (world, registrations) = world_with(&["edge"]).await;
    // An environment without a namespace: no pair is made for it.
    let environments: Api<Environment> = Api::all(world.landscaper_cluster().client());
    let mut homeless: Value = serde_json::to_value(environments.get("edge").await.unwrap())
        .expect("an environment as JSON");
    homeless["metadata"] = json!({ "name": "homeless" });
    homeless["spec"]["namespace"] = json!("");
    homeless.as_object_mut().unwrap().remove("status");
    environments
        .create(
            &PostParams::default(),
            &serde_json::from_value(homeless).unwrap(),
        )
        .await
        .expect("environment created");

    // A registration without types is installed nowhere.
    registrations
        .create(
            &PostParams::default(),
            &inline_registration("untyped", &[], "deployItems: []"),
        )
        .await
        .expect("registration created");
    eventually("the untyped registration says why", || async {
        let status = status_of(&registrations, "untyped").await;
        status.conditions.iter().any(|condition| {
            condition.type_ == "Ready"
                && condition.reason == "InvalidSpec"
                && condition.message.contains("spec.types is empty")
        })
    })
    .await;

    // A blueprint that fails to render: the pair's job fails and the registration says so.
    registrations
        .create(
            &PostParams::default(),
            &inline_registration(
                "broken",
                &[deploy_item_types::MOCK],
                r#"{{ fail "the broken deployer cannot be rendered" }}"#,
            ),
        )
        .await
        .expect("registration created");
    eventually("the broken pair's render error is reported", || async {
        let message = entry_message(&registrations, "broken", "edge").await;
        // The installation's own error, which names it.
        message.contains("Installation ls-system/broken-edge")
            && message.contains("the broken deployer cannot be rendered")
    })
    .await;
    let homeless = entry_message(&registrations, "broken", "homeless").await;
    assert!(homeless.contains("no spec.namespace"), "{homeless}");

    let names: Vec<String> = installations(&world)
        .list(&Default::default())
        .await
        .expect("list")
        .items
        .iter()
        .map(ResourceExt::name_any)
        .collect();
    assert_eq!(names, ["broken-edge"], "only the well-formed pair is made");
}

#[tokio::test]
async fn a_pair_installation_the_api_server_refuses_is_a_status_message_and_an_event() {
    use testbed::{Fault, Matcher};
    let (world, registrations) = world_with(&["edge"]).await;
    // As a ValidatingAdmissionPolicy denies the pair's Installation, until it is lifted.
    let denial = "ValidatingAdmissionPolicy 'pinned-deployers' with binding 'ls-system' denied request: spec.blueprint must be a component resource";
    world.landscaper_cluster().faults().fail_next(
        1000,
        Matcher::any()
            .verb("patch")
            .resource("installations")
            .name("mock-edge"),
        Fault::Invalid(denial.to_owned()),
    );
    register_mock(&registrations).await;
    let message = entry_message(&registrations, "mock", "edge").await;
    assert_eq!(
        message,
        format!(
            "DeployerRegistration mock: environment edge: writing Installation mock-edge: {denial}"
        )
    );
    wait_for_warning(
        &world,
        "PairRefused",
        Some(&format!("environment edge: {message}")),
    )
    .await;

    // Lifted, the next change of the registration installs the deployer.
    world.landscaper_cluster().faults().clear();
    set_values(&registrations, "mock", json!({"replicas": 1})).await;
    wait_for_installation(&world, "mock-edge").await;
    eventually("the refusal is no longer reported", || async {
        current_message(&registrations, "mock", "edge")
            .await
            .is_none_or(|m| !m.contains(denial))
    })
    .await;
}

/// A write of a pair: verb, resource, and the object's name from the pair's name.
type Step = (&'static str, &'static str, fn(&str) -> String);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_or_409_at_each_step_of_a_pair_converges() {
    use testbed::{Fault, Matcher};
    let (world, _registrations) = world_with_mock(&[]).await;
    // Every write of a pair, each failing once in an environment of its own.
    let steps: [Step; 7] = [
        ("patch", "serviceaccounts", |pair| pair.to_owned()),
        ("patch", "clusterroles", |pair| {
            format!("landscaper:deployer:{pair}")
        }),
        ("patch", "clusterrolebindings", |pair| {
            format!("landscaper:deployer:{pair}")
        }),
        ("create", "serviceaccounts/token", |pair| pair.to_owned()),
        ("patch", "secrets", |pair| {
            format!("{pair}-landscaper-cluster")
        }),
        ("patch", "targets", |pair| pair.to_owned()),
        ("patch", "installations", |pair| pair.to_owned()),
    ];
    let mut pairs = Vec::new();
    for (index, (verb, resource, object)) in steps.iter().enumerate() {
        for (fault_index, fault) in [Fault::InternalError, Fault::Conflict]
            .into_iter()
            .enumerate()
        {
            let environment = format!("f{index}{fault_index}");
            let pair = format!("mock-{environment}");
            world.landscaper_cluster().faults().fail_next(
                1,
                Matcher::any()
                    .verb(verb)
                    .resource(resource)
                    .name(&object(&pair)),
                fault,
            );
            create_environment(&world, &environment).await;
            pairs.push((pair, format!("{verb} {resource}")));
        }
    }
    let client = world.landscaper_cluster().client();
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), LS_NAMESPACE);
    let targets: Api<Target> = Api::namespaced(client.clone(), LS_NAMESPACE);
    let secrets: Api<Secret> = Api::namespaced(client.clone(), LS_NAMESPACE);
    let roles: Api<ClusterRole> = Api::all(client.clone());
    let bindings: Api<ClusterRoleBinding> = Api::all(client);
    for (pair, step) in &pairs {
        landscaper_e2e::eventually_within(
            &format!("{pair} is complete and started although {step} failed once"),
            Duration::from_secs(90),
            || async {
                let role = format!("landscaper:deployer:{pair}");
                accounts.get_opt(pair).await.unwrap().is_some()
                    && roles.get_opt(&role).await.unwrap().is_some()
                    && bindings.get_opt(&role).await.unwrap().is_some()
                    && secrets
                        .get_opt(&format!("{pair}-landscaper-cluster"))
                        .await
                        .unwrap()
                        .is_some()
                    && targets.get_opt(pair).await.unwrap().is_some()
                    && job_id(&world, pair).await.is_some()
            },
        )
        .await;
    }
}

/// A client acting as the pair's deployer: the kubeconfig of the pair's Target.
async fn as_pair(world: &World, pair: &str) -> kube::Client {
    let client = world.landscaper_cluster().client();
    let secrets: Api<Secret> = Api::namespaced(client, LS_NAMESPACE);
    let name = format!("{pair}-landscaper-cluster");
    eventually(&format!("{pair}'s access Secret"), || async {
        secrets.get_opt(&name).await.expect("read").is_some()
    })
    .await;
    let kubeconfig = secrets
        .get(&name)
        .await
        .expect("read")
        .data
        .and_then(|data| data.get("kubeconfig").cloned());
    let kubeconfig: Kubeconfig =
        serde_yaml_ng::from_slice(&kubeconfig.expect("a kubeconfig").0).expect("YAML");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("a usable kubeconfig");
    kube::Client::try_from(config).expect("a client")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pairs_deployer_does_its_work_and_cannot_read_another_pairs_secrets() {
    use landscaper_api::core::{DeployItem, DeployItemPhase, ObjectReference};
    let (world, _registrations) = world_with_mock(&["edge", "west"]).await;
    let deployer = as_pair(&world, "mock-edge").await;
    let _other = as_pair(&world, "mock-west").await;
    // The item names the environment's Target, which the Environment controller writes on its
    // own schedule: an item whose job starts before it exists fails at once with
    // `TargetNotFound`, as upstream's deployers fail it (this test's flake until it waited).
    let targets: Api<Target> = Api::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE);
    eventually("the environment's Target", || async {
        targets.get_opt("edge").await.expect("read").is_some()
    })
    .await;

    // Its work: a mock deployer with the pair's identity and nothing else serves an item of
    // its environment, with exports (an export Secret written).
    let mut config =
        landscaper_deployer::controller::DeployerConfig::new(deploy_item_types::MOCK, "mock-edge");
    config.namespace = Some(LS_NAMESPACE.to_owned());
    config.retry_initial = Duration::from_millis(100);
    let setup =
        landscaper_deployer::deployers::mock::setup(deployer.clone(), deployer.clone(), config);
    tokio::spawn(landscaper_deployer::run(setup, std::future::pending()));
    let items: Api<DeployItem> = Api::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE);
    let mut item = mock_item("edge-item");
    item.spec.target = Some(ObjectReference {
        name: "edge".to_owned(),
        namespace: Some(LS_NAMESPACE.to_owned()),
    });
    item.spec.config.as_mut().expect("a configuration")["export"] = json!({ "greeting": "hello" });
    start_job(&items, &item, "job-1").await;
    // The item is shown when it is not done.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    loop {
        let item = items.get("edge-item").await.expect("read");
        let status = item.status.clone().unwrap_or_default();
        if status.job_id_finished.as_deref() == Some("job-1")
            && status.phase == Some(DeployItemPhase::Succeeded)
            && status.export_ref.is_some()
        {
            break;
        }
        let failed = status.job_id_finished.as_deref() == Some("job-1")
            && status.phase != Some(DeployItemPhase::Succeeded);
        assert!(
            !failed && tokio::time::Instant::now() < deadline,
            "the pair's deployer did not finish the item with its exports: {item:#?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Another pair's access Secret (its deployer's identity) is out of reach, and so is every
    // Secret's content: the deployer writes export Secrets without reading any.
    let secrets: Api<Secret> = Api::namespaced(deployer.clone(), LS_NAMESPACE);
    for (what, denied) in [
        (
            "another pair's access Secret",
            secrets.get("mock-west-landscaper-cluster").await.err(),
        ),
        (
            "its own access Secret",
            secrets.get("mock-edge-landscaper-cluster").await.err(),
        ),
        (
            "the Secrets of the namespace",
            secrets.list(&Default::default()).await.err(),
        ),
    ] {
        assert!(
            matches!(&denied, Some(kube::Error::Api(status)) if status.code == 403),
            "{what}: {denied:?}"
        );
    }
    let denied = Api::<Secret>::all(deployer)
        .list(&Default::default())
        .await
        .expect_err("no Secret of the cluster is listed");
    assert!(matches!(denied, kube::Error::Api(status) if status.code == 403));
}
