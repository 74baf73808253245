//! `helm template` flags this command does not implement. Each is still recognised, so that
//! using one fails with a message saying why instead of clap's "unexpected argument" (and
//! instead of being silently ignored).

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command, FromArgMatches};

/// (flag, takes a value, why it is not supported).
const FLAGS: &[(&str, Takes, &str)] = &[
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
                };
                command.arg(arg)
            })
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}
