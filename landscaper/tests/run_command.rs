//! `landscaper run` as the chart runs it: two replicas with `--leader-elect`, each serving
//! `/healthz`, `/readyz` and `/metrics` on `--health-address`. One leads and reconciles; the other
//! is ready and reconciles nothing until the leader stops (SIGTERM) and releases the Lease.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const NAMESPACE: &str = "ls-system";

async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    // Generous: the binary is a debug build on a shared machine.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The status code and body of `GET path` on `port`; `None` while nothing answers.
async fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .ok()?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await.ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    let code = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((code, body.to_owned()))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

/// A replica of `landscaper run --leader-elect` named `name`, serving its probes on `port`.
fn replica(kubeconfig: &std::path::Path, name: &str, port: u16) -> Child {
    Command::new(env!("CARGO_BIN_EXE_landscaper"))
        .args(["run", "--leader-elect", "--kubeconfig"])
        .arg(kubeconfig)
        .arg(format!("--health-address=127.0.0.1:{port}"))
        .env("POD_NAME", name)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("landscaper starts")
}

/// Whether the replica on `port` runs controllers: its reconcile metrics exist once it does.
async fn reconciling(port: u16) -> bool {
    get(port, "/metrics").await.is_some_and(|(code, body)| {
        code == 200
            && body.lines().any(|l| {
                l.starts_with("controller_runtime_reconcile_total{controller=\"environment\"")
            })
    })
}

async fn ready(port: u16) -> bool {
    get(port, "/readyz").await == Some((200, "ok\n".to_owned()))
}

async fn holder(leases: &Api<Lease>) -> String {
    leases
        .get_opt("landscaper-leader")
        .await
        .expect("Lease readable")
        .and_then(|lease| lease.spec?.holder_identity)
        .unwrap_or_default()
}

fn terminate(child: &mut Child) -> std::process::ExitStatus {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    child.wait().expect("the replica exits")
}

#[tokio::test]
async fn a_standby_replica_is_ready_and_reconciles_nothing_until_the_leader_stops() {
    let dir = tempfile::tempdir().unwrap();
    let bed = testbed::Testbed::builder()
        .kubeconfig_dir(dir.path())
        .start()
        .await
        .expect("testbed");
    let client = bed.cluster().client();
    landscaper::dev::prepare_landscaper_cluster(&client, NAMESPACE)
        .await
        .expect("CRDs installed");
    let kubeconfig = bed.cluster().kubeconfig_path().to_owned();
    let leases: Api<Lease> = Api::namespaced(client, NAMESPACE);

    let (a_port, b_port) = (free_port(), free_port());
    let mut a = replica(&kubeconfig, "replica-a", a_port);
    eventually("replica a leads, reconciles and is ready", || async {
        holder(&leases).await.starts_with("replica-a_")
            && reconciling(a_port).await
            && ready(a_port).await
    })
    .await;
    assert_eq!(
        get(a_port, "/healthz").await,
        Some((200, "ok\n".to_owned()))
    );

    let mut b = replica(&kubeconfig, "replica-b", b_port);
    eventually("replica b is ready on standby", || async {
        ready(b_port).await
    })
    .await;
    // Well past a renewal period: b keeps waiting and runs no controller.
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert!(!reconciling(b_port).await, "the standby runs controllers");
    assert!(ready(b_port).await);
    assert!(holder(&leases).await.starts_with("replica-a_"));

    // The leader stops gracefully and releases the Lease: b takes over at once.
    assert!(terminate(&mut a).success(), "a exits cleanly on SIGTERM");
    eventually("replica b leads and reconciles", || async {
        holder(&leases).await.starts_with("replica-b_")
            && reconciling(b_port).await
            && ready(b_port).await
    })
    .await;
    assert!(terminate(&mut b).success(), "b exits cleanly on SIGTERM");
}
