use super::*;

const KUBECONFIG: &str = "apiVersion: v1
kind: Config
current-context: c
clusters:
- name: k
  cluster: {server: 'https://api.example'}
contexts:
- name: c
  context: {cluster: k, user: u}
users:
- name: u
  user: {token: admin}
";

fn arg(value: Json) -> Argument {
    let go_type = match &value {
        Json::String(_) => "string",
        Json::Number(n) if n.is_i64() => "int",
        Json::Number(_) => "float64",
        Json::Bool(_) => "bool",
        Json::Null => "<nil>",
        Json::Array(_) => "[]interface {}",
        Json::Object(_) => "map[string]interface {}",
    };
    Argument {
        value,
        go_type: go_type.into(),
    }
}

fn target(config: Json) -> Json {
    json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "Target",
        "metadata": {"name": "cluster", "namespace": "ns"},
        "spec": {"type": "landscaper.gardener.cloud/kubernetes-cluster", "config": config},
    })
}

#[test]
fn oidc_kubeconfig_of_an_inline_target_needs_no_cluster() {
    let args = [
        arg(json!("https://issuer")),
        arg(json!("client")),
        arg(target(json!({"kubeconfig": KUBECONFIG}))),
    ];
    let out = call(&InlineOnly, Function::Oidc, &args).unwrap();
    let text = String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(out.as_str().unwrap())
            .unwrap(),
    )
    .unwrap();
    assert!(
        text.contains("- --oidc-issuer-url=https://issuer\n"),
        "{text}"
    );
    assert!(text.contains("- name: u\n  user:\n    exec:\n"), "{text}");
    assert!(!text.contains("admin"), "{text}");
}

use base64::Engine as _;

#[test]
fn argument_errors_are_upstreams() {
    let t = target(json!({"kubeconfig": KUBECONFIG}));
    let cases = [
        (
            Function::ServiceAccount,
            vec![arg(json!("a"))],
            "templating function getServiceAccountToken expects 4 arguments: service account name, service account namespace, expiration seconds, and target",
        ),
        (
            Function::ShootAdminWithExpiration,
            vec![
                arg(json!(1)),
                arg(json!("ns")),
                arg(json!(1)),
                arg(t.clone()),
            ],
            "templating function getShootAdminKubeconfig expects a string as 1st argument, namely the shoot name",
        ),
        (
            Function::ServiceAccount,
            vec![
                arg(json!("a")),
                arg(json!("ns")),
                arg(json!("3600")),
                arg(t.clone()),
            ],
            "templating function getServiceAccountToken expects an integer as 3rd argument, namely the expiration seconds: unsupported type string",
        ),
        (
            Function::Oidc,
            vec![arg(json!("i")), arg(json!(true)), arg(t.clone())],
            "templating function getOidcKubeconfig expects a string as 2nd argument, namely the client id",
        ),
    ];
    for (function, args, expected) in cases {
        assert_eq!(call(&InlineOnly, function, &args).unwrap_err(), expected);
    }
    let not_a_target = call(
        &InlineOnly,
        Function::Oidc,
        &[arg(json!("i")), arg(json!("c")), arg(json!("text"))],
    )
    .unwrap_err();
    assert!(
        not_a_target.starts_with(
            "templating function getOidcKubeconfig expects a target object as 3rd argument: error during unmarshaling:"
        ),
        "{not_a_target}"
    );
}

#[test]
fn without_a_cluster_the_error_names_function_target_and_cause() {
    let args = [
        arg(json!("deployer")),
        arg(json!("team")),
        arg(json!(3600.0)),
        arg(target(json!({"kubeconfig": KUBECONFIG}))),
    ];
    let error = call(&InlineOnly, Function::ServiceAccountWithExpiration, &args).unwrap_err();
    assert_eq!(
        error,
        "templating function getServiceAccountKubeconfigWithExpirationTimestamp: Target ns/cluster: token request failed: a TokenRequest for ServiceAccount team/deployer needs a cluster, and none is reachable here"
    );
    let secret_target = json!({
        "metadata": {"name": "garden", "namespace": "ns"},
        "spec": {"type": "landscaper.gardener.cloud/kubernetes-cluster", "secretRef": {"name": "garden-kubeconfig"}},
    });
    let error = call(
        &InlineOnly,
        Function::ShootAdmin,
        &[
            arg(json!("shoot")),
            arg(json!("garden-dev")),
            arg(json!(600)),
            arg(secret_target),
        ],
    )
    .unwrap_err();
    assert_eq!(
        error,
        "templating function getShootAdminKubeconfig: Target ns/garden: could not resolve target: spec.secretRef names Secret \"garden-kubeconfig\", which only a resolver with cluster access can read"
    );
}

#[test]
fn go_templates_and_spiff_templates_call_the_same_functions() {
    use crate::{ExecutionOptions, MemoryState, Templater};
    let blueprint: landscaper_api::core::Blueprint = serde_json::from_value(json!({
        "deployExecutions": [
            {
                "name": "go",
                "type": "GoTemplate",
                "template": "deployItems:\n- name: go\n  type: t\n  config:\n    k: {{ getOidcKubeconfig \"https://i\" \"c\" .imports.cluster | quote }}\n",
            },
            {
                "name": "spiff",
                "type": "Spiff",
                "template": {"deployItems": [{
                    "name": "spiff",
                    "type": "t",
                    "config": {"k": "(( getOidcKubeconfig(\"https://i\", \"c\", imports.cluster) ))"},
                }]},
            },
        ],
    }))
    .unwrap();
    let options = ExecutionOptions {
        blueprint,
        imports: json!({"cluster": target(json!({"kubeconfig": KUBECONFIG}))})
            .as_object()
            .cloned()
            .unwrap(),
        ..Default::default()
    };
    let state = MemoryState::default();
    let items = Templater::new(&state).deploy_executions(&options).unwrap();
    let expected = call(
        &InlineOnly,
        Function::Oidc,
        &[
            arg(json!("https://i")),
            arg(json!("c")),
            arg(target(json!({"kubeconfig": KUBECONFIG}))),
        ],
    )
    .unwrap();
    assert_eq!(items[0].config["k"], expected);
    assert_eq!(items[1].config["k"], expected);
}
