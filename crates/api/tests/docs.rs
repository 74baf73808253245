//! The README and `docs/` stay true: every command in a fenced `sh` block of the README is run
//! by CI or by a named test, and every relative link of the README and of `docs/*.md` names a
//! file or folder of the repository. It lives in this crate, the lightest of the workspace,
//! so the check costs almost nothing to build.

use std::path::{Path, PathBuf};

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// Where each README command runs: a file of the repository and a text in it that shows the
/// command is run there (`.ci/run` runs its lines; tests run the binaries or the library).
const RUN_BY: &[(&str, &str, &str)] = &[
    (
        "cargo run -p landscaper -- dev",
        "landscaper/tests/dev_mode.rs",
        "landscaper::dev::",
    ),
    (
        "cargo run -p landscaper -- dev --until-ready",
        "landscaper/tests/dev_command.rs",
        "\"--until-ready\"",
    ),
    (
        "eval \"$(.ci/install-tools)\"",
        ".ci/run",
        "eval \"$(.ci/install-tools)\"",
    ),
    (
        "cargo test --workspace --locked --no-fail-fast",
        ".ci/run",
        "cargo test --workspace --locked --no-fail-fast",
    ),
    (
        "cargo run -p landscaper -- crds --output-dir charts/landscaper/crds",
        "crates/api/tests/checked_in_crds.rs",
        "charts/landscaper/crds",
    ),
    (
        "helm upgrade --install my-env ./charts/landscaper-agent -f values.yaml",
        "tests/tests/agent_chart.rs",
        "installs with helm",
    ),
    (
        "cargo run -p landscaper -- validate examples/",
        "landscaper/tests/validate.rs",
        "join(\"../examples\")",
    ),
];

/// The commands of the fenced `sh` blocks: one per line, comments and blank lines left out.
fn sh_commands(markdown: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut in_sh = false;
    for line in markdown.lines() {
        let trimmed = line.trim();
        if let Some(info) = trimmed.strip_prefix("```") {
            in_sh = !in_sh && info.trim() == "sh";
            continue;
        }
        if in_sh && !trimmed.is_empty() && !trimmed.starts_with('#') {
            commands.push(trimmed.to_owned());
        }
    }
    commands
}

/// The targets of inline links `[text](target)` that are neither URLs nor anchors.
fn relative_links(markdown: &str) -> Vec<String> {
    markdown
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.split_once(')').map(|(target, _)| target))
        .map(|target| target.split('#').next().unwrap_or_default().to_owned())
        .filter(|target| !target.is_empty() && !target.contains("://"))
        .collect()
}

#[test]
fn every_readme_command_is_run_by_ci_or_a_test() {
    let commands = sh_commands(&read(&repository().join("README.md")));
    assert!(commands.len() >= 3, "{commands:?}");
    for command in &commands {
        let (_, file, evidence) = RUN_BY
            .iter()
            .find(|(listed, _, _)| listed == command)
            .unwrap_or_else(|| panic!("README command {command:?} is run by no test or CI step"));
        let text = read(&repository().join(file));
        assert!(
            text.contains(evidence),
            "{file} no longer shows that it runs {command:?}"
        );
    }
}

#[test]
fn every_relative_link_resolves() {
    let mut pages = vec![repository().join("README.md")];
    for entry in std::fs::read_dir(repository().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|extension| extension == "md") {
            pages.push(path);
        }
    }
    for page in &pages {
        let base = page.parent().unwrap();
        for link in relative_links(&read(page)) {
            assert!(
                base.join(&link).exists(),
                "{}: link {link} resolves to nothing",
                page.display()
            );
        }
    }
}

#[test]
fn the_extractors_find_what_they_should() {
    let markdown = "x\n```sh\n# a comment\ncargo a\n\ncargo b\n```\n```yaml\nk: v\n```\n[d](docs/a.md#x) [u](https://e.org) [a](#top)";
    assert_eq!(sh_commands(markdown), vec!["cargo a", "cargo b"]);
    assert_eq!(relative_links(markdown), vec!["docs/a.md"]);
}
