//! Benchmark: upstream's manifest-deployer blueprint resolved from a `type: local` component
//! repository and rendered 1,000 times, each time for other imports, as 1,000 installations
//! of one registration would be. Reports the time per render and the process's peak RSS.
//!
//! `cargo bench -p landscaper-blueprint --bench render [-- --renders N]`

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use landscaper_blueprint::registry::{BLUEPRINT_MEDIA_TYPE, archive_blueprint};
use landscaper_blueprint::{
    Descriptor, ExecutionOptions, MemoryState, RegistryAccess, RegistryOptions, Repository,
    Templater, imports, load,
};
use serde_json::json;

const COMPONENT: &str = "github.com/gardener/landscaper/manifest-deployer";
const VERSION: &str = "v0.120.0";

fn renders() -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--renders")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}

/// A local repository holding the manifest deployer's component with its blueprint as a blob.
fn repository(dir: &std::path::Path) -> Option<Repository> {
    let upstream = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "../../../shared/conformance/landscaper/examples/ls-manifest-deployer-bp__blueprint.yaml",
    );
    let blueprint = std::fs::read(upstream).ok()?;
    let bp_dir = dir.join("bp");
    std::fs::create_dir_all(&bp_dir).unwrap();
    std::fs::write(bp_dir.join("blueprint.yaml"), blueprint).unwrap();
    std::fs::create_dir_all(dir.join("repo/blobs")).unwrap();
    std::fs::write(
        dir.join("repo/blobs/blueprint.tar.gz"),
        archive_blueprint(&bp_dir).unwrap(),
    )
    .unwrap();
    let mut descriptor: serde_json::Value = serde_yaml_ng::from_str(
        &std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests/data/manifest-deployer-component.yaml"),
        )
        .unwrap(),
    )
    .unwrap();
    descriptor["component"]["resources"][0]["access"] = json!({"type": "localFilesystemBlob",
        "filename": "blueprint.tar.gz", "mediaType": BLUEPRINT_MEDIA_TYPE});
    std::fs::write(dir.join("repo/component.yaml"), descriptor.to_string()).unwrap();
    Some(Repository::Local {
        path: dir.join("repo"),
    })
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let Some(repository) = repository(dir.path()) else {
        eprintln!("the conformance examples are not beside the repository: nothing to measure");
        return;
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let access = RegistryAccess::new(RegistryOptions::default());
    let count = renders();
    let start = Instant::now();
    let mut items = 0;
    for i in 0..count {
        let (descriptor, fs): (Descriptor, _) = runtime.block_on(async {
            let descriptor = access
                .descriptor(&repository, COMPONENT, VERSION)
                .await
                .unwrap();
            let fs = access
                .blueprint(&repository, &descriptor, "manifest-deployer-blueprint")
                .await
                .unwrap();
            (descriptor, fs)
        });
        let blueprint = load::load(&fs).unwrap().blueprint;
        let given = json!({
            "cluster": {"spec": {"type": "landscaper.gardener.cloud/kubernetes-cluster",
                "config": {"kubeconfig": format!("kubeconfig {i}")}}},
            "releaseName": format!("manifest-deployer-{i}"),
            "releaseNamespace": format!("env-{i}"),
            "identity": format!("manifest-{i}"),
            "values": {"replicaCount": i % 3 + 1},
        });
        let imports = imports::validate(&blueprint, &fs, given.as_object().unwrap()).unwrap();
        let options = ExecutionOptions {
            blueprint,
            filesystem: Arc::new(fs),
            component: Some(descriptor),
            imports,
            ..Default::default()
        };
        let state = MemoryState::default();
        items += Templater::new(&state)
            .deploy_executions(&options)
            .unwrap()
            .len();
    }
    let elapsed = start.elapsed();
    assert_eq!(items, count);
    println!(
        "{count} renders of the manifest-deployer blueprint: {:.1} ms in all, {:.0} µs per render; peak RSS {} KiB",
        elapsed.as_secs_f64() * 1e3,
        elapsed.as_secs_f64() * 1e6 / count as f64,
        peak_rss_kib()
    );
}
