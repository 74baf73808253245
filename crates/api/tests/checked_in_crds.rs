//! The CRDs checked in under `charts/landscaper/crds/` are exactly what the types generate.

use std::path::PathBuf;

use landscaper_api::crd;

#[test]
fn checked_in_crds_match_the_types() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../charts/landscaper/crds");
    let crds = crd::all();
    let mut expected_files: Vec<String> = crds.iter().map(crd::file_name).collect();
    expected_files.sort();
    let mut present: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    present.sort();
    let regenerate =
        "regenerate with: cargo run -p landscaper -- crds --output-dir charts/landscaper/crds";
    assert_eq!(
        present, expected_files,
        "CRD files differ from the kinds; {regenerate}"
    );
    for crd in &crds {
        let path = dir.join(crd::file_name(crd));
        let on_disk = std::fs::read_to_string(&path).unwrap();
        assert!(
            on_disk == crd::to_yaml(crd),
            "{} drifted from the types; {regenerate}",
            path.display()
        );
    }
}
