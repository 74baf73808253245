//! What dev mode shows: one row per environment × DeployerRegistration (the phase of the pair's
//! Installation and what it waits for), one per example Installation or DeployItem, whether
//! all of it is ready or something failed, and the same as a table, as change lines and as a
//! closing summary.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use kube::api::Api;
use landscaper_api::core::{
    DeployItem, DeployItemPhase, DeployerRegistration, Installation, InstallationPhase,
};

use super::examples::Applied;

/// The pair of a registration in an environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairRow {
    /// The environment.
    pub environment: String,
    /// The registration.
    pub registration: String,
    /// The phase of the pair's Installation; `-` before it has one.
    pub phase: String,
    /// Whether the deployer is installed there.
    pub ready: bool,
    /// What it waits for or what is wrong, in words.
    pub detail: String,
}

/// An Installation or DeployItem the examples applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExampleRow {
    /// `Installation` or `DeployItem`.
    pub kind: String,
    /// `namespace/name`.
    pub name: String,
    /// Its phase; `-` before it has one.
    pub phase: String,
    /// Whether its job finished Succeeded.
    pub ready: bool,
    /// Whether it ended Failed.
    pub failed: bool,
    /// Its last error, if any.
    pub detail: String,
}

/// The state of everything dev mode started, read from the landscaper cluster.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Board {
    /// One row per environment × registration, by environment then registration.
    pub pairs: Vec<PairRow>,
    /// One row per example Installation or DeployItem, in the order they were applied.
    pub examples: Vec<ExampleRow>,
}

/// Whether dev mode has reached its goal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Something is still on its way.
    Waiting,
    /// Every pair and every example is Succeeded.
    Ready,
    /// These ended Failed (a line each, with the reason).
    Failed(Vec<String>),
}

impl Board {
    /// Reads the registrations' status and the examples' objects from the landscaper cluster.
    pub async fn observe(
        client: &kube::Client,
        environments: &[String],
        examples: &[Applied],
    ) -> Result<Self, kube::Error> {
        let registrations = Api::<DeployerRegistration>::all(client.clone())
            .list(&Default::default())
            .await?
            .items;
        let mut pairs = Vec::new();
        for environment in environments {
            for registration in &registrations {
                pairs.push(pair_row(registration, environment));
            }
        }
        let mut rows = Vec::new();
        for example in examples {
            if let Some(row) = example_row(client, example).await? {
                rows.push(row);
            }
        }
        Ok(Self {
            pairs,
            examples: rows,
        })
    }

    /// Ready when every pair and example is (also when there are none); Failed as soon as one
    /// failed.
    pub fn verdict(&self) -> Verdict {
        let failed: Vec<String> = self
            .pairs
            .iter()
            .filter(|p| p.phase == InstallationPhase::Failed.as_str())
            .map(|p| {
                format!(
                    "the {} deployer in environment {} failed: {}",
                    p.registration, p.environment, p.detail
                )
            })
            .chain(
                self.examples
                    .iter()
                    .filter(|e| e.failed)
                    .map(|e| format!("{} {} failed: {}", e.kind, e.name, e.detail)),
            )
            .collect();
        if !failed.is_empty() {
            return Verdict::Failed(failed);
        }
        let ready = self.pairs.iter().all(|p| p.ready) && self.examples.iter().all(|e| e.ready);
        if ready {
            Verdict::Ready
        } else {
            Verdict::Waiting
        }
    }

    /// The table a terminal shows, redrawn in place.
    pub fn table(&self) -> String {
        let mut pairs = vec![[
            "ENVIRONMENT".to_owned(),
            "DEPLOYER".to_owned(),
            "PHASE".to_owned(),
            "WAITING FOR / LAST ERROR".to_owned(),
        ]];
        pairs.extend(self.pairs.iter().map(|p| {
            [
                p.environment.clone(),
                p.registration.clone(),
                p.phase.clone(),
                p.detail.clone(),
            ]
        }));
        let mut text = columns(&pairs);
        if !self.examples.is_empty() {
            let mut examples = vec![[
                "EXAMPLE".to_owned(),
                "NAME".to_owned(),
                "PHASE".to_owned(),
                "LAST ERROR".to_owned(),
            ]];
            examples.extend(self.examples.iter().map(|e| {
                [
                    e.kind.clone(),
                    e.name.clone(),
                    e.phase.clone(),
                    e.detail.clone(),
                ]
            }));
            text.push('\n');
            text.push_str(&columns(&examples));
        }
        text
    }

    /// One line per row that is new or changed since `before`, for output that is not a
    /// terminal.
    pub fn changes(&self, before: &Self) -> Vec<String> {
        let old_pairs: BTreeMap<(&str, &str), &PairRow> = before
            .pairs
            .iter()
            .map(|p| ((p.environment.as_str(), p.registration.as_str()), p))
            .collect();
        let old_examples: BTreeMap<(&str, &str), &ExampleRow> = before
            .examples
            .iter()
            .map(|e| ((e.kind.as_str(), e.name.as_str()), e))
            .collect();
        let pairs = self
            .pairs
            .iter()
            .filter(|p| {
                old_pairs.get(&(p.environment.as_str(), p.registration.as_str())) != Some(p)
            })
            .map(|p| {
                format!(
                    "deployer {} in environment {}: {}{}",
                    p.registration,
                    p.environment,
                    p.phase,
                    suffix(&p.detail)
                )
            });
        let examples = self
            .examples
            .iter()
            .filter(|e| old_examples.get(&(e.kind.as_str(), e.name.as_str())) != Some(e))
            .map(|e| format!("{} {}: {}{}", e.kind, e.name, e.phase, suffix(&e.detail)));
        pairs.chain(examples).collect()
    }

    /// The closing summary: counts, and what failed or is still waiting.
    pub fn summary(&self) -> String {
        let ready_pairs = self.pairs.iter().filter(|p| p.ready).count();
        let ready_examples = self.examples.iter().filter(|e| e.ready).count();
        let mut text = format!(
            "{ready_pairs}/{} deployers installed (environment × registration), {ready_examples}/{} examples Succeeded",
            self.pairs.len(),
            self.examples.len()
        );
        for pair in self.pairs.iter().filter(|p| !p.ready) {
            let _ = write!(
                text,
                "\n  deployer {} in environment {}: {}{}",
                pair.registration,
                pair.environment,
                pair.phase,
                suffix(&pair.detail)
            );
        }
        for example in self.examples.iter().filter(|e| !e.ready) {
            let _ = write!(
                text,
                "\n  {} {}: {}{}",
                example.kind,
                example.name,
                example.phase,
                suffix(&example.detail)
            );
        }
        text
    }
}

fn suffix(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(" ({detail})")
    }
}

fn pair_row(registration: &DeployerRegistration, environment: &str) -> PairRow {
    let name = registration.metadata.name.clone().unwrap_or_default();
    let status = registration.status.clone().unwrap_or_default();
    let mut row = PairRow {
        environment: environment.to_owned(),
        registration: name,
        phase: "-".to_owned(),
        ready: false,
        detail: String::new(),
    };
    match status
        .environments
        .iter()
        .find(|e| e.environment == environment)
    {
        Some(pair) => {
            row.phase = pair.phase.clone().unwrap_or_else(|| "-".to_owned());
            row.ready = pair.ready;
            row.detail = pair.message.clone().unwrap_or_default();
        }
        None => {
            row.detail = status.last_error.map_or_else(
                || "the environment is not registered yet".to_owned(),
                |e| e.message,
            );
        }
    }
    row
}

async fn example_row(
    client: &kube::Client,
    example: &Applied,
) -> Result<Option<ExampleRow>, kube::Error> {
    let name = format!("{}/{}", example.namespace, example.name);
    let row = match example.kind.as_str() {
        "Installation" => {
            let installations: Api<Installation> =
                Api::namespaced(client.clone(), &example.namespace);
            let status = installations
                .get_opt(&example.name)
                .await?
                .and_then(|i| i.status)
                .unwrap_or_default();
            let job_done = status.job_id.is_some() && status.job_id == status.job_id_finished;
            ExampleRow {
                kind: example.kind.clone(),
                name,
                ready: job_done && status.phase == Some(InstallationPhase::Succeeded),
                failed: job_done
                    && matches!(
                        status.phase,
                        Some(InstallationPhase::Failed | InstallationPhase::DeleteFailed)
                    ),
                phase: status
                    .phase
                    .map_or_else(|| "-".to_owned(), |p| p.to_string()),
                detail: status.last_error.map(|e| e.message).unwrap_or_default(),
            }
        }
        "DeployItem" => {
            let items: Api<DeployItem> = Api::namespaced(client.clone(), &example.namespace);
            let status = items
                .get_opt(&example.name)
                .await?
                .and_then(|i| i.status)
                .unwrap_or_default();
            // An item applied on its own runs on its operation annotation, without a job ID.
            let job_done = status.job_id == status.job_id_finished;
            ExampleRow {
                kind: example.kind.clone(),
                name,
                ready: job_done && status.phase == Some(DeployItemPhase::Succeeded),
                failed: job_done && status.phase == Some(DeployItemPhase::Failed),
                phase: status
                    .phase
                    .map_or_else(|| "-".to_owned(), |p| p.to_string()),
                detail: status.last_error.map(|e| e.message).unwrap_or_default(),
            }
        }
        _ => return Ok(None),
    };
    Ok(Some(row))
}

/// Rows as left-aligned columns two spaces apart; the last column is not padded.
fn columns<const N: usize>(rows: &[[String; N]]) -> String {
    let mut widths = [0usize; N];
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut text = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == N {
                line.push_str(cell);
            } else {
                let _ = write!(line, "{cell:<width$}  ", width = widths[i]);
            }
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(registration: &str, phase: &str, ready: bool, detail: &str) -> PairRow {
        PairRow {
            environment: "edge".into(),
            registration: registration.into(),
            phase: phase.into(),
            ready,
            detail: detail.into(),
        }
    }

    fn example(phase: &str, ready: bool, failed: bool) -> ExampleRow {
        ExampleRow {
            kind: "DeployItem".into(),
            name: "ls-system/hello".into(),
            phase: phase.into(),
            ready,
            failed,
            detail: if failed { "boom".into() } else { String::new() },
        }
    }

    #[test]
    fn the_verdict_waits_for_every_row_and_fails_on_any() {
        assert_eq!(Board::default().verdict(), Verdict::Ready);
        let mut board = Board {
            pairs: vec![
                pair("manifest", "Succeeded", true, ""),
                pair("hello", "Progressing", false, "waits for manifest"),
            ],
            examples: vec![example("Succeeded", true, false)],
        };
        assert_eq!(board.verdict(), Verdict::Waiting);
        board.pairs[1] = pair("hello", "Succeeded", true, "");
        assert_eq!(board.verdict(), Verdict::Ready);
        board.examples[0] = example("Failed", false, true);
        assert_eq!(
            board.verdict(),
            Verdict::Failed(vec!["DeployItem ls-system/hello failed: boom".into()])
        );
    }

    #[test]
    fn the_table_aligns_columns_and_changes_name_only_what_changed() {
        let before = Board {
            pairs: vec![
                pair("manifest", "Progressing", false, ""),
                pair("hello", "-", false, "waits for manifest"),
            ],
            examples: vec![],
        };
        assert_eq!(
            before.table(),
            "ENVIRONMENT  DEPLOYER  PHASE        WAITING FOR / LAST ERROR\n\
             edge         manifest  Progressing\n\
             edge         hello     -            waits for manifest\n"
        );
        let mut after = before.clone();
        after.pairs[0] = pair("manifest", "Succeeded", true, "");
        assert_eq!(
            after.changes(&before),
            vec!["deployer manifest in environment edge: Succeeded".to_owned()]
        );
        assert!(after.summary().starts_with("1/2 deployers installed"));
        assert!(
            after
                .summary()
                .contains("deployer hello in environment edge: - (waits for manifest)")
        );
    }
}
