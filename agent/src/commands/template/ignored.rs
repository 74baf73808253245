//! `helm template` flags that only matter when helm installs a release into a cluster: helm
//! accepts them in `template`, checks their values and then ignores them, and so does this
//! command, with helm's error for a malformed value and its warning for a deprecated one.

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command, FromArgMatches};
use landscaper_chart::engine::value::format::quote;
use landscaper_chart::helm::funcs::dates::parse_duration;
use landscaper_chart::helm::values::slog_line;

/// What a given value is for helm: fine, fine with a warning to log, or an error.
type Check = fn(&str) -> Result<Option<String>, Problem>;

/// Why helm refuses a value.
enum Problem {
    /// The flag parser's reason, which it prints as `invalid argument "V" for "--F" flag: …`.
    Invalid(String),
    /// helm's own message, printed as it is.
    Own(String),
}

impl From<String> for Problem {
    fn from(reason: String) -> Problem {
        Problem::Invalid(reason)
    }
}

/// How a flag takes its value.
#[derive(Clone, Copy)]
enum Takes {
    /// A boolean: `--flag` or `--flag=false`.
    Bool,
    /// `--flag VALUE`.
    Value,
    /// `--flag` alone or `--flag=VALUE`.
    Optional,
}

/// (flag, how it takes its value, what its value must be).
const FLAGS: &[(&str, Takes, Check)] = &[
    ("create-namespace", Takes::Bool, any),
    ("description", Takes::Value, any),
    ("disable-openapi-validation", Takes::Bool, any),
    ("dry-run", Takes::Optional, dry_run),
    ("force-conflicts", Takes::Bool, any),
    ("force-replace", Takes::Bool, any),
    ("hide-notes", Takes::Bool, any),
    ("render-subchart-notes", Takes::Bool, any),
    ("labels", Takes::Value, labels),
    ("replace", Takes::Bool, any),
    ("rollback-on-failure", Takes::Bool, any),
    ("server-side", Takes::Bool, any),
    ("skip-crds", Takes::Bool, any),
    ("take-ownership", Takes::Bool, any),
    ("timeout", Takes::Value, timeout),
    ("wait", Takes::Optional, wait),
    ("wait-for-jobs", Takes::Bool, any),
    ("kube-apiserver", Takes::Value, any),
    ("kube-as-group", Takes::Value, any),
    ("kube-as-user", Takes::Value, any),
    ("kube-ca-file", Takes::Value, any),
    ("kube-insecure-skip-tls-verify", Takes::Bool, any),
    ("kube-tls-server-name", Takes::Value, any),
    ("kube-token", Takes::Value, any),
    ("burst-limit", Takes::Value, integer),
    ("qps", Takes::Value, float),
    ("color", Takes::Value, color),
    ("colour", Takes::Value, color),
];

/// The value clap gives a flag given alone, which no command line can spell.
const ALONE: &str = "\u{0}";

/// The ignored flags given on the command line, with their values.
#[derive(Debug, Default, Clone)]
pub struct Ignored(Vec<(&'static str, String)>);

impl Ignored {
    /// The warnings helm logs for the flags given, or its error for the first bad value.
    pub fn check(&self) -> Result<Vec<String>, String> {
        let mut warnings = Vec::new();
        for (flag, value) in &self.0 {
            let Some(&(_, takes, check)) = FLAGS.iter().find(|(name, ..)| name == flag) else {
                continue;
            };
            let result = match takes {
                Takes::Bool if value != ALONE => {
                    go_bool(value).map(|_| None).map_err(Problem::from)
                }
                Takes::Bool => Ok(None),
                _ => check(value),
            };
            match result {
                Ok(Some(warning)) => warnings.push(slog_line("WARN", &warning, &[])),
                Ok(None) => {}
                Err(Problem::Own(message)) => return Err(message),
                Err(Problem::Invalid(reason)) => {
                    let shown = if *flag == "labels" {
                        "-l, --labels".to_string()
                    } else {
                        format!("--{flag}")
                    };
                    let value = if value == ALONE { "" } else { value };
                    return Err(format!(
                        "invalid argument {} for {} flag: {reason}",
                        quote(value),
                        quote(&shown)
                    ));
                }
            }
        }
        Ok(warnings)
    }
}

fn any(_: &str) -> Result<Option<String>, Problem> {
    Ok(None)
}

fn dry_run(value: &str) -> Result<Option<String>, Problem> {
    match value {
        ALONE | "unset" => Ok(Some(
            "--dry-run is deprecated and should be replaced with '--dry-run=client'".to_string(),
        )),
        "client" => Ok(None),
        boolean if go_bool(boolean) == Ok(true) => Ok(Some(format!(
            "boolean '--dry-run={boolean}' flag is deprecated and must be replaced with '--dry-run=client'"
        ))),
        "server" => Err(Problem::Own(
            "--dry-run=server is not supported by landscaper-agent template: it asks a cluster, \
and landscaper-agent template never talks to one"
                .to_string(),
        )),
        boolean if boolean == "none" || go_bool(boolean) == Ok(false) => {
            Err(Problem::Own(format!(
                "invalid dry-run value ({}). Must be \"server\" or \"client\"",
                quote(value)
            )))
        }
        _ => Err(Problem::Own(format!(
            "invalid dry-run value ({}). Must be \"none\", \"server\", or \"client\"",
            quote(value)
        ))),
    }
}

fn wait(value: &str) -> Result<Option<String>, Problem> {
    match value {
        ALONE | "watcher" | "hookOnly" | "legacy" => Ok(None),
        "true" => Ok(Some(
            "--wait=true is deprecated (boolean value) and can be replaced with --wait=watcher"
                .to_string(),
        )),
        "false" => Ok(Some(
            "--wait=false is deprecated (boolean value) and can be replaced with --wait=hookOnly"
                .to_string(),
        )),
        other => Err(Problem::Invalid(format!(
            "invalid wait input {}. Valid inputs are watcher, hookOnly, and legacy",
            quote(other)
        ))),
    }
}

fn labels(value: &str) -> Result<Option<String>, Problem> {
    if value.contains('=') {
        Ok(None)
    } else {
        Err(Problem::Invalid(format!(
            "{value} must be formatted as key=value"
        )))
    }
}

fn integer(value: &str) -> Result<Option<String>, Problem> {
    let digits = value.strip_prefix(['+', '-']).unwrap_or(value);
    let parsed = match digits.get(..2) {
        Some("0x" | "0X") => i64::from_str_radix(&digits[2..], 16).is_ok(),
        Some("0o" | "0O") => i64::from_str_radix(&digits[2..], 8).is_ok(),
        Some("0b" | "0B") => i64::from_str_radix(&digits[2..], 2).is_ok(),
        _ => digits.parse::<i64>().is_ok(),
    };
    if parsed {
        Ok(None)
    } else {
        Err(Problem::Invalid(format!(
            "strconv.ParseInt: parsing {}: invalid syntax",
            quote(value)
        )))
    }
}

fn float(value: &str) -> Result<Option<String>, Problem> {
    match value.parse::<f32>() {
        Ok(_) => Ok(None),
        Err(_) => Err(Problem::Invalid(format!(
            "strconv.ParseFloat: parsing {}: invalid syntax",
            quote(value)
        ))),
    }
}

fn color(value: &str) -> Result<Option<String>, Problem> {
    match value {
        "never" | "auto" | "always" => Ok(None),
        other => Err(Problem::Own(format!(
            "invalid color mode {}: must be one of: never, auto, always",
            quote(other)
        ))),
    }
}

/// Go's `strconv.ParseBool`.
fn go_bool(value: &str) -> Result<bool, String> {
    match value {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(false),
        _ => Err(format!(
            "strconv.ParseBool: parsing {}: invalid syntax",
            quote(value)
        )),
    }
}

/// Go's `time.ParseDuration`, for its errors.
fn timeout(value: &str) -> Result<Option<String>, Problem> {
    parse_duration(value)
        .map(|_| None)
        .map_err(Problem::Invalid)
}

impl FromArgMatches for Ignored {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut given = Vec::new();
        for (name, ..) in FLAGS {
            if matches.value_source(name) != Some(ValueSource::CommandLine) {
                continue;
            }
            let values = matches.get_many::<String>(name).into_iter().flatten();
            let indices = matches.indices_of(name).into_iter().flatten();
            let mut occurrences: Vec<(usize, String)> = indices.zip(values.cloned()).collect();
            // helm reads only the last of these; the others, like pflag, check every one.
            if matches!(*name, "dry-run" | "color" | "colour") {
                occurrences = occurrences.split_off(occurrences.len().saturating_sub(1));
            }
            given.extend(
                occurrences
                    .into_iter()
                    .map(|(at, value)| (at, *name, value)),
            );
        }
        // Checked in command-line order, as pflag parses them.
        given.sort_by_key(|(at, ..)| *at);
        Ok(Ignored(
            given
                .into_iter()
                .map(|(_, name, value)| (name, value))
                .collect(),
        ))
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Ignored::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Args for Ignored {
    fn augment_args(command: Command) -> Command {
        FLAGS.iter().fold(command, |command, (name, takes, _)| {
            let arg = Arg::new(*name)
                .long(*name)
                .help("Accepted and ignored, as helm template ignores it")
                .hide_short_help(true)
                .action(ArgAction::Append);
            // helm's only short form among these.
            let arg = if *name == "labels" {
                arg.short('l')
            } else {
                arg
            };
            let arg = match takes {
                // `--timeout -3s` is a value, as for helm.
                Takes::Value => arg.num_args(1).allow_hyphen_values(true),
                Takes::Bool | Takes::Optional => arg
                    .num_args(0..=1)
                    .require_equals(true)
                    .default_missing_value(ALONE),
            };
            command.arg(arg)
        })
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(given: &[(&'static str, &str)]) -> Result<Vec<String>, String> {
        Ignored(given.iter().map(|(f, v)| (*f, v.to_string())).collect()).check()
    }

    #[test]
    fn values_are_checked_and_worded_as_helm_does() {
        assert_eq!(check(&[("wait", ALONE), ("skip-crds", ALONE)]), Ok(vec![]));
        assert_eq!(
            check(&[("dry-run", ALONE)]),
            Ok(vec![
                "level=WARN msg=\"--dry-run is deprecated and should be replaced with '--dry-run=client'\""
                    .to_string()
            ])
        );
        assert_eq!(
            check(&[("dry-run", "T")]),
            Ok(vec![
                "level=WARN msg=\"boolean '--dry-run=T' flag is deprecated and must be replaced with '--dry-run=client'\"".to_string()
            ])
        );
        let errors = [
            (
                ("dry-run", "false"),
                "invalid dry-run value (\"false\"). Must be \"server\" or \"client\"",
            ),
            (
                ("dry-run", "none"),
                "invalid dry-run value (\"none\"). Must be \"server\" or \"client\"",
            ),
            (
                ("server-side", "auto"),
                "invalid argument \"auto\" for \"--server-side\" flag: strconv.ParseBool: parsing \"auto\": invalid syntax",
            ),
            (
                ("wait", "bogus"),
                "invalid argument \"bogus\" for \"--wait\" flag: invalid wait input \"bogus\". Valid inputs are watcher, hookOnly, and legacy",
            ),
            (
                ("timeout", "1"),
                "invalid argument \"1\" for \"--timeout\" flag: time: missing unit in duration \"1\"",
            ),
            (
                ("timeout", "1x"),
                "invalid argument \"1x\" for \"--timeout\" flag: time: unknown unit \"x\" in duration \"1x\"",
            ),
            (
                ("labels", "bogus"),
                "invalid argument \"bogus\" for \"-l, --labels\" flag: bogus must be formatted as key=value",
            ),
            (
                ("burst-limit", "1.5"),
                "invalid argument \"1.5\" for \"--burst-limit\" flag: strconv.ParseInt: parsing \"1.5\": invalid syntax",
            ),
        ];
        let errors = errors.into_iter().chain([(
            ("color", "bogus"),
            "invalid color mode \"bogus\": must be one of: never, auto, always",
        )]);
        for ((flag, value), want) in errors {
            assert_eq!(
                check(&[(flag, value)]),
                Err(want.to_string()),
                "{flag}={value}"
            );
        }
        for (flag, value) in [
            ("timeout", "1.5h"),
            ("timeout", "-3s"),
            ("timeout", "0"),
            ("timeout", "1h2m3.5s"),
            ("labels", "a=b,c"),
            ("qps", "1e3"),
            ("server-side", "false"),
            ("color", "never"),
        ] {
            assert!(check(&[(flag, value)]).is_ok(), "{flag}={value}");
        }
    }
}
