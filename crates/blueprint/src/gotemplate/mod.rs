//! GoTemplate executions: Go's `text/template` (the chart crate's engine) with Sprig and the
//! Landscaper functions, `missingkey=zero`, and upstream's error reports.

mod functions;

pub use functions::Context;

use std::sync::Arc;

use landscaper_chart::engine::{Engine, MissingKey};
use serde_json::{Map, Value as Json};

use crate::ExecutionKind;
use crate::report::{GO_TEMPLATE_SENSITIVE_KEYS, error_position, format_input, source_snippet};
use crate::values::to_template;

/// The name the template is parsed under, which Go's error messages show.
const TEMPLATE_NAME: &str = "execution";

/// What Go prints for a missing value.
const NO_VALUE: &str = "<no value>";

/// Renders `text` with `binding`; errors are upstream's reports (Go's message, the source
/// around the failure, and the binding with its sensitive values hidden). Output holding
/// `<no value>` is an error for executions of `no_value_check`'s kind.
pub fn render(
    no_value_check: Option<ExecutionKind>,
    text: &str,
    binding: &Map<String, Json>,
    context: Arc<Context>,
) -> Result<String, String> {
    let mut engine = Engine::new(functions::landscaper_funcs(context));
    engine.options_mut().missing_key = MissingKey::Zero;
    let report = |message: String| {
        let lines: Vec<&str> = text.split('\n').collect();
        let (line, column) = error_position(&message).unwrap_or((0, 0));
        let snippet = if (1..=lines.len()).contains(&line) {
            source_snippet(&lines, line, column)
        } else {
            String::new()
        };
        format!(
            "{message}\ntemplate source:\n{snippet}\ntemplate input:\n{}",
            format_input(binding, GO_TEMPLATE_SENSITIVE_KEYS, "\t", false)
        )
    };
    engine
        .add_template(TEMPLATE_NAME, text)
        .map_err(|e| report(e.to_string()))?;
    let dot = to_template(&Json::Object(binding.clone()));
    let out = engine
        .render(TEMPLATE_NAME, &dot)
        .map_err(|e| report(e.to_string()))?;
    if let Some(kind) = no_value_check
        && out.contains(NO_VALUE)
    {
        return Err(no_value_report(kind, &out, binding));
    }
    Ok(out)
}

/// The report of rendered text holding `<no value>`: each such line with the rendered text
/// around it.
fn no_value_report(kind: ExecutionKind, out: &str, binding: &Map<String, Json>) -> String {
    let lines: Vec<&str> = out.split('\n').collect();
    let mut report = format!(
        "template \"{}\" contains fields with \"no value\":",
        kind.execution_name()
    );
    for (index, line) in lines.iter().enumerate() {
        if let Some(column) = line.find(NO_VALUE) {
            report.push_str(&format!("\nline {}:{column}\n", index + 1));
            report.push_str(&source_snippet(&lines, index + 1, column));
        }
    }
    report.push_str("\ntemplate input:\n");
    report.push_str(&format_input(
        binding,
        GO_TEMPLATE_SENSITIVE_KEYS,
        "\t",
        false,
    ));
    report
}
