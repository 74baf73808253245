//! A failing Spiff execution's error names the execution, the node's path in the template and
//! the expression, for each way an expression can fail: an unresolved reference, a type
//! error, a failing function and a limit of the engine.

use std::sync::Arc;

use landscaper_api::core::{Blueprint, TemplateExecutor};
use landscaper_blueprint::{ExecutionOptions, Filesystem, MemoryState, Templater};
use serde_json::json;

/// The error of a blueprint whose one Spiff deploy execution `main` renders one item `web`
/// whose `config.value` is `expression`.
fn deploy_error(expression: &str) -> String {
    let executor: TemplateExecutor = serde_json::from_value(json!({
        "name": "main",
        "type": "Spiff",
        "template": {"deployItems": [{
            "name": "web",
            "type": "landscaper.gardener.cloud/mock",
            "config": {"value": expression},
        }]},
    }))
    .unwrap();
    let options = ExecutionOptions {
        blueprint: Blueprint {
            deploy_executions: vec![executor],
            ..Blueprint::default()
        },
        filesystem: Arc::new(Filesystem::new()),
        imports: json!({"replicas": 3, "name": "web"})
            .as_object()
            .cloned()
            .unwrap(),
        ..ExecutionOptions::default()
    };
    let state = MemoryState::default();
    match Templater::new(&state).deploy_executions(&options) {
        Ok(items) => panic!("{expression} rendered {items:?}"),
        Err(error) => error.to_string(),
    }
}

/// Asserts the three parts and the cause, and that the message starts with the execution.
fn assert_names_all(message: &str, expression: &str, cause: &str) {
    assert!(
        message.starts_with("deploy execution \"main\": "),
        "the execution: {message}"
    );
    assert!(
        message.contains("deployItems.[0].config.value"),
        "the path: {message}"
    );
    assert!(message.contains(expression), "the expression: {message}");
    assert!(message.contains(cause), "the cause: {message}");
}

#[test]
fn an_unresolved_reference_names_execution_path_and_expression() {
    let message = deploy_error("(( imports.missing.value ))");
    assert_names_all(
        &message,
        "(( imports.missing.value ))",
        "'imports.missing' not found",
    );
}

#[test]
fn a_type_error_names_execution_path_and_expression() {
    let message = deploy_error("(( imports.replicas - imports.name ))");
    assert_names_all(
        &message,
        "(( imports.replicas - imports.name ))",
        "requires number arguments",
    );
}

#[test]
fn a_failing_function_names_execution_path_and_expression() {
    let message = deploy_error("(( base64_decode(\"not base64!\") ))");
    assert_names_all(&message, "(( base64_decode(\"not base64!\") ))", "base64");
}

#[test]
fn a_limit_names_execution_path_and_expression() {
    let message = deploy_error("(( [1 .. 100000000] ))");
    assert_names_all(&message, "(( [1 .. 100000000] ))", "exceeds the limit");
    assert!(message.contains("evaluation stopped"), "{message}");
}
