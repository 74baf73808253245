//! Dev mode shows the whole mission, as `landscaper dev` runs it: two environments with an
//! agent each, the repository's three DeployerRegistrations (manifest, mock, and hello, whose
//! blueprint renders a manifest item, so it needs the manifest deployer), and the user's
//! examples (a helm item, a manifest item, an Installation greeting both environments). Every
//! deployer is installed in every environment, in dependency order; the user's objects appear
//! in the fenced clusters; removing one environment's agent removes its deployers and releases
//! it.

use std::path::PathBuf;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams};
use landscaper::dev::board::Verdict;
use landscaper::dev::{DevMode, Options};
use landscaper_api::core::{DeployItem, Environment, Installation, InstallationPhase, Target};

const NAMESPACE: &str = "ls-system";
const REGISTRATIONS: [&str; 3] = ["hello", "manifest", "mock"];

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

async fn config_map(client: kube::Client, namespace: &str, name: &str) -> Option<ConfigMap> {
    Api::<ConfigMap>::namespaced(client, namespace)
        .get_opt(name)
        .await
        .expect("ConfigMap read")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dev_mode_installs_every_deployer_in_order_and_deploys_the_examples() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        examples: Some(repository().join("examples")),
        base: repository(),
        heartbeat_period: "1s".into(),
        ..Options::new(dir.path())
    };
    let mut dev = DevMode::start(&options).await.unwrap();
    for environment in ["default", "edge"] {
        assert!(
            dev.kubeconfig(environment).unwrap().starts_with(dir.path()),
            "{environment}'s kubeconfig is in the dev folder"
        );
    }
    assert_eq!(
        dev.landscaper_kubeconfig(),
        dir.path().join("landscaper.kubeconfig")
    );

    let deadline = tokio::time::Instant::now() + Duration::from_secs(300);
    let board = loop {
        let board = dev.board().await.unwrap();
        match board.verdict() {
            Verdict::Ready => break board,
            Verdict::Failed(reasons) => panic!("{reasons:#?}\n{}", board.table()),
            Verdict::Waiting => {}
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not everything is Succeeded:\n{}",
            board.table()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(board.pairs.len(), 6, "{}", board.table());
    let examples: Vec<&str> = board.examples.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        examples,
        [
            "ls-system/hello-chart",
            "ls-system/hello-configmap",
            "ls-system/hello"
        ],
        "{}",
        board.table()
    );

    let landscaper = dev.landscaper_client();
    let installations: Api<Installation> = Api::namespaced(landscaper.clone(), NAMESPACE);
    let all = installations.list(&ListParams::default()).await.unwrap();
    for installation in &all.items {
        let status = installation.status.clone().unwrap_or_default();
        assert_eq!(
            status.phase,
            Some(InstallationPhase::Succeeded),
            "Installation {:?}",
            installation.metadata.name
        );
    }
    assert_eq!(all.items.len(), 7, "six pairs and the user's Installation");

    let items: Api<DeployItem> = Api::namespaced(landscaper.clone(), NAMESPACE);
    for environment in ["default", "edge"] {
        let fenced = dev.client(environment).unwrap();
        // The user's Installation greeted the environment through its manifest deployer.
        let greeting = config_map(fenced.clone(), "default", "greeting")
            .await
            .unwrap_or_else(|| panic!("no greeting in {environment}"));
        assert_eq!(
            greeting.data.unwrap()["environment"],
            environment,
            "greeting in {environment}"
        );

        // Order: hello's item was deployed by the manifest deployer of its environment, and
        // picked up only after that deployer had been installed there.
        let hello_items = items
            .list(&ListParams::default().labels(&format!(
                "execution.landscaper.gardener.cloud/managed-by=hello-{environment}"
            )))
            .await
            .unwrap()
            .items;
        assert_eq!(hello_items.len(), 1, "hello-{environment} renders one item");
        let status = hello_items[0].status.clone().unwrap();
        assert_eq!(
            status.deployer.map(|d| d.identity).as_deref(),
            Some(format!("manifest-{environment}").as_str()),
            "the manifest deployer of {environment} deployed hello's item"
        );
        let picked_up = status.last_reconcile_time.expect("picked up").0;
        let deployers = Api::<Deployment>::all(fenced.clone())
            .list(&ListParams::default().labels("app.kubernetes.io/name=manifest-deployer"))
            .await
            .unwrap()
            .items;
        assert_eq!(deployers.len(), 1, "one manifest deployer in {environment}");
        let installed = deployers[0].metadata.creation_timestamp.clone().unwrap().0;
        assert!(
            installed.as_second() <= picked_up.as_second(),
            "hello's item in {environment} was picked up ({picked_up}) before the manifest deployer existed ({installed})"
        );
    }
    // The examples' own items, in environment default.
    let fenced = dev.client("default").unwrap();
    assert!(
        config_map(fenced.clone(), "default", "hello")
            .await
            .is_some()
    );
    assert!(config_map(fenced, "hello", "hello").await.is_some());

    // The edge agent is uninstalled: its cleanup waits until the landscaper removed edge's
    // deployers, then the Environment is gone.
    dev.remove_environment("edge", Duration::from_secs(120))
        .await
        .unwrap();
    for registration in REGISTRATIONS {
        assert!(
            installations
                .get_opt(&format!("{registration}-edge"))
                .await
                .unwrap()
                .is_none(),
            "the pair {registration}-edge is removed"
        );
        assert_eq!(
            installations
                .get(&format!("{registration}-default"))
                .await
                .unwrap()
                .status
                .and_then(|s| s.phase),
            Some(InstallationPhase::Succeeded),
            "the pair {registration}-default stays"
        );
    }
    assert!(
        Api::<Environment>::all(landscaper.clone())
            .get_opt("edge")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        Api::<Target>::namespaced(landscaper, NAMESPACE)
            .get_opt("edge")
            .await
            .unwrap()
            .is_none()
    );
    let board = dev.board().await.unwrap();
    assert!(
        board.pairs.iter().all(|p| p.environment == "default"),
        "{}",
        board.table()
    );
}
