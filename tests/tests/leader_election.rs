//! Leader election: of two landscaper replicas one leads, the other waits and takes over when
//! the Lease is released or no longer renewed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use landscaper::leader::{Election, Outcome};
use landscaper_e2e::{eventually, leader};
use tokio::sync::oneshot;

const NAMESPACE: &str = "default";

fn election(client: &kube::Client, identity: &str) -> Election {
    Election::new(client.clone(), NAMESPACE, "landscaper-leader", identity)
        .with_timing(Duration::from_secs(2), Duration::from_millis(200))
}

/// Runs `election` with work that marks `leading` until `stop` fires.
fn spawn(
    election: Election,
    leading: Arc<AtomicBool>,
) -> (oneshot::Sender<()>, tokio::task::JoinHandle<Outcome>) {
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        election
            .run(async {
                leading.store(true, Ordering::SeqCst);
                let _ = stopped.await;
                leading.store(false, Ordering::SeqCst);
            })
            .await
    });
    (stop, task)
}

#[tokio::test]
async fn one_replica_leads_and_the_other_takes_over_when_it_releases() {
    let bed = testbed::Testbed::builder().start().await.expect("testbed");
    let client = bed.cluster().client();
    let (a_leads, b_leads) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let (stop_a, a) = spawn(election(&client, "a"), a_leads.clone());
    eventually("a leads", || async { a_leads.load(Ordering::SeqCst) }).await;
    let (stop_b, b) = spawn(election(&client, "b"), b_leads.clone());
    // b keeps waiting while a renews, well past one lease duration.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        !b_leads.load(Ordering::SeqCst),
        "b must not lead while a renews"
    );
    assert_eq!(leader(&client, NAMESPACE).await.as_deref(), Some("a"));

    let _ = stop_a.send(());
    assert_eq!(a.await.expect("a ends"), Outcome::Finished);
    eventually("b takes over the released Lease", || async {
        b_leads.load(Ordering::SeqCst)
    })
    .await;
    assert_eq!(leader(&client, NAMESPACE).await.as_deref(), Some("b"));
    let _ = stop_b.send(());
    assert_eq!(b.await.expect("b ends"), Outcome::Finished);
    assert_eq!(
        leader(&client, NAMESPACE).await,
        None,
        "released on shutdown"
    );
}

#[tokio::test]
async fn a_lease_no_longer_renewed_is_taken_over_after_it_expires() {
    let bed = testbed::Testbed::builder().start().await.expect("testbed");
    let client = bed.cluster().client();
    let a_leads = Arc::new(AtomicBool::new(false));
    let (_stop_a, a) = spawn(election(&client, "a"), a_leads.clone());
    eventually("a leads", || async { a_leads.load(Ordering::SeqCst) }).await;
    // a crashes: nothing renews or releases its Lease.
    a.abort();
    let b_leads = Arc::new(AtomicBool::new(false));
    let (stop_b, b) = spawn(election(&client, "b"), b_leads.clone());
    eventually("b takes over after the lease duration", || async {
        b_leads.load(Ordering::SeqCst)
    })
    .await;
    assert_eq!(leader(&client, NAMESPACE).await.as_deref(), Some("b"));
    let _ = stop_b.send(());
    b.await.expect("b ends");
}

#[tokio::test]
async fn a_leader_whose_lease_was_taken_stops() {
    let bed = testbed::Testbed::builder().start().await.expect("testbed");
    let client = bed.cluster().client();
    let a_leads = Arc::new(AtomicBool::new(false));
    let (_stop_a, a) = spawn(election(&client, "a"), a_leads.clone());
    eventually("a leads", || async { a_leads.load(Ordering::SeqCst) }).await;
    // Someone else writes itself into the Lease (as a replica would after a partition).
    let leases: Api<Lease> = Api::namespaced(client.clone(), NAMESPACE);
    let mut lease = leases.get("landscaper-leader").await.expect("lease");
    lease.spec.as_mut().expect("spec").holder_identity = Some("intruder".to_owned());
    leases
        .replace("landscaper-leader", &Default::default(), &lease)
        .await
        .expect("taken");
    assert_eq!(a.await.expect("a ends"), Outcome::Lost);
}
