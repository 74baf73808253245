//! Installing the Landscaper CRDs into a cluster and waiting until they are served.

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::ResourceExt;
use kube::api::{Api, PostParams};
use tracing::info;

/// How long to wait for the API server to serve a new CRD.
const ESTABLISH_TIMEOUT: Duration = Duration::from_secs(30);

/// Creates missing CRDs and replaces ones that differ from the types; waits until every CRD
/// is Established.
pub async fn ensure(client: &kube::Client) -> Result<(), kube::Error> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for desired in landscaper_api::crd::all() {
        let name = desired.name_any();
        match crds.get_opt(&name).await? {
            None => {
                crds.create(&PostParams::default(), &desired).await?;
                info!(crd = %name, "created");
            }
            Some(existing) if existing.spec == desired.spec => {}
            Some(existing) => {
                let mut updated = desired.clone();
                updated.metadata.resource_version = existing.metadata.resource_version;
                crds.replace(&name, &PostParams::default(), &updated)
                    .await?;
                info!(crd = %name, "updated");
            }
        }
        wait_established(&crds, &name).await?;
    }
    Ok(())
}

async fn wait_established(
    crds: &Api<CustomResourceDefinition>,
    name: &str,
) -> Result<(), kube::Error> {
    let deadline = tokio::time::Instant::now() + ESTABLISH_TIMEOUT;
    loop {
        let crd = crds.get(name).await?;
        let established = crd
            .status
            .and_then(|s| s.conditions)
            .is_some_and(|conditions| {
                conditions
                    .iter()
                    .any(|c| c.type_ == "Established" && c.status == "True")
            });
        if established || tokio::time::Instant::now() >= deadline {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
