//! `helm template` flags this command does not implement. Each is still recognised, so that
//! using one fails with a message saying why instead of clap's "unexpected argument" (and
//! instead of being silently ignored).

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command, FromArgMatches};

/// Why a flag does nothing for a render that never talks to a cluster.
const CLUSTER_ONLY: &str = "it only changes how helm installs a release into a cluster, and \
landscaper-agent template never talks to one";

/// (flag, takes a value, why it is not supported).
const FLAGS: &[(&str, Takes, &str)] = &[
    ("create-namespace", Takes::Nothing, CLUSTER_ONLY),
    ("description", Takes::Value, CLUSTER_ONLY),
    ("disable-openapi-validation", Takes::Nothing, CLUSTER_ONLY),
    ("dry-run", Takes::Optional, CLUSTER_ONLY),
    ("force-conflicts", Takes::Nothing, CLUSTER_ONLY),
    ("force-replace", Takes::Nothing, CLUSTER_ONLY),
    (
        "hide-notes",
        Takes::Nothing,
        "template output never shows notes",
    ),
    (
        "render-subchart-notes",
        Takes::Nothing,
        "template output never shows notes",
    ),
    ("labels", Takes::Value, CLUSTER_ONLY),
    ("replace", Takes::Nothing, CLUSTER_ONLY),
    ("rollback-on-failure", Takes::Nothing, CLUSTER_ONLY),
    ("server-side", Takes::Optional, CLUSTER_ONLY),
    ("skip-crds", Takes::Nothing, CLUSTER_ONLY),
    ("take-ownership", Takes::Nothing, CLUSTER_ONLY),
    ("timeout", Takes::Value, CLUSTER_ONLY),
    ("wait", Takes::Optional, CLUSTER_ONLY),
    ("wait-for-jobs", Takes::Nothing, CLUSTER_ONLY),
    ("kube-apiserver", Takes::Value, CLUSTER_ONLY),
    ("kube-as-group", Takes::Value, CLUSTER_ONLY),
    ("kube-as-user", Takes::Value, CLUSTER_ONLY),
    ("kube-ca-file", Takes::Value, CLUSTER_ONLY),
    ("kube-context", Takes::Value, CLUSTER_ONLY),
    (
        "kube-insecure-skip-tls-verify",
        Takes::Nothing,
        CLUSTER_ONLY,
    ),
    ("kube-tls-server-name", Takes::Value, CLUSTER_ONLY),
    ("kube-token", Takes::Value, CLUSTER_ONLY),
    ("kubeconfig", Takes::Value, CLUSTER_ONLY),
    ("burst-limit", Takes::Value, CLUSTER_ONLY),
    ("qps", Takes::Value, CLUSTER_ONLY),
    ("color", Takes::Value, "landscaper-agent prints no colours"),
    ("colour", Takes::Value, "landscaper-agent prints no colours"),
    (
        "verify",
        Takes::Nothing,
        "chart provenance (.prov files signed with OpenPGP) is not verified by landscaper-agent",
    ),
    (
        "keyring",
        Takes::Value,
        "chart provenance (.prov files signed with OpenPGP) is not verified by landscaper-agent",
    ),
    (
        "cert-file",
        Takes::Value,
        "TLS client certificates for repositories and registries are not supported",
    ),
    (
        "key-file",
        Takes::Value,
        "TLS client certificates for repositories and registries are not supported",
    ),
    (
        "dependency-update",
        Takes::Nothing,
        "dependencies are not fetched: vendor them into the chart's charts/ folder (helm dependency build)",
    ),
    (
        "enable-dns",
        Takes::Nothing,
        "templates cannot resolve DNS names here (getHostByName stays offline)",
    ),
    (
        "post-renderer",
        Takes::Value,
        "helm 4 post-renderers are postrenderer/v1 plugins run by helm's plugin system, which \
landscaper-agent does not have; pipe the output into the post-renderer instead",
    ),
    (
        "post-renderer-args",
        Takes::Value,
        "helm 4 post-renderers are postrenderer/v1 plugins run by helm's plugin system, which \
landscaper-agent does not have; pipe the output into the post-renderer instead",
    ),
];

#[derive(Clone, Copy)]
enum Takes {
    Nothing,
    Value,
    /// `--flag` or `--flag=value`.
    Optional,
}

/// The unsupported flags given on the command line, in the table's order.
#[derive(Debug, Default, Clone)]
pub struct Unsupported(pub Vec<&'static str>);

impl Unsupported {
    /// The error for the first unsupported flag given, if any.
    pub fn error(&self) -> Option<String> {
        let flag = self.0.first()?;
        let reason = FLAGS
            .iter()
            .find(|(name, _, _)| name == flag)
            .map_or("", |(_, _, reason)| reason);
        Some(format!(
            "--{flag} is not supported by landscaper-agent template: {reason}"
        ))
    }
}

impl FromArgMatches for Unsupported {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let given = FLAGS
            .iter()
            .map(|(name, _, _)| *name)
            .filter(|name| matches.value_source(name) == Some(ValueSource::CommandLine))
            .collect();
        Ok(Unsupported(given))
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Unsupported::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Args for Unsupported {
    fn augment_args(command: Command) -> Command {
        FLAGS
            .iter()
            .fold(command, |command, (name, takes, reason)| {
                let arg = Arg::new(*name)
                    .long(*name)
                    .help(format!("Not supported: {reason}"))
                    .hide_short_help(true);
                // helm's only short form among these.
                let arg = if *name == "labels" {
                    arg.short('l')
                } else {
                    arg
                };
                let arg = match takes {
                    Takes::Nothing => arg.action(ArgAction::SetTrue),
                    Takes::Value => arg.action(ArgAction::Append).num_args(1),
                    Takes::Optional => arg
                        .action(ArgAction::Append)
                        .num_args(0..=1)
                        .require_equals(true)
                        .default_missing_value(""),
                };
                command.arg(arg)
            })
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}
