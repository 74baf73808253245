//! The examples stay true: the helm example carries exactly the chart checked in beside it.

use std::path::PathBuf;

use base64::Engine as _;
use landscaper_chart::chart::{self, Chart, File};
use landscaper_chart::data::Map;
use landscaper_chart::render::{self, ReleaseOptions, TemplateOptions};
use landscaper_e2e::rbac::documents;

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

/// Names and contents, sorted by name: the times differ by design (an archive keeps its
/// entries' times, a checkout has the clone's).
fn contents(files: &[File]) -> Vec<(&str, &[u8])> {
    let mut files: Vec<_> = files
        .iter()
        .map(|file| (file.name.as_str(), &file.data.read().unwrap()[..]))
        .collect();
    files.sort();
    files
}

fn template(chart: &Chart) -> String {
    let options = TemplateOptions {
        release: ReleaseOptions {
            name: "hello".into(),
            namespace: "hello".into(),
            ..Default::default()
        },
        ..Default::default()
    };
    let release = render::install(chart, &Map::default(), &options).expect("the chart renders");
    render::template_output(release, &options).expect("template output")
}

#[test]
fn helm_example_archive_is_the_packaged_hello_chart() {
    let text = std::fs::read_to_string(examples().join("deploy-item-helm.yaml")).unwrap();
    let item = &documents(&text)[0];
    let raw = item["spec"]["config"]["chart"]["archive"]["raw"]
        .as_str()
        .expect("the example carries an inline archive");
    let compact: String = raw.split_whitespace().collect();
    let archive = base64::engine::general_purpose::STANDARD
        .decode(compact)
        .expect("base64");
    let inline = chart::load_archive(&archive).expect("the inline chart loads");
    let folder = chart::load(&examples().join("charts/hello")).expect("the chart folder loads");
    assert_eq!(
        contents(&inline.templates),
        contents(&folder.templates),
        "examples/deploy-item-helm.yaml: the archive's templates differ from examples/charts/hello; regenerate it (see the file's comment)"
    );
    assert_eq!(
        contents(&inline.files),
        contents(&folder.files),
        "examples/deploy-item-helm.yaml: the archive's files differ from examples/charts/hello"
    );
    assert_eq!(template(&inline), template(&folder));
}
