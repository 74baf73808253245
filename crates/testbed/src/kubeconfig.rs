//! Kubeconfig files for a cluster: its URL, the CA it is signed by, and a bearer token.

use base64::Engine as _;

/// Renders a kubeconfig with one cluster, one user (a bearer token) and one context.
pub fn render(name: &str, server: &str, ca_pem: &str, token: &str) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    format!(
        "apiVersion: v1\n\
         kind: Config\n\
         clusters:\n\
         - name: {name}\n  cluster:\n    server: {server}\n    certificate-authority-data: {ca}\n\
         users:\n\
         - name: {name}-admin\n  user:\n    token: {token}\n\
         contexts:\n\
         - name: {name}\n  context:\n    cluster: {name}\n    user: {name}-admin\n\
         current-context: {name}\n\
         preferences: {{}}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubeconfig_is_valid_yaml_with_the_token() {
        let text = render("c1", "https://127.0.0.1:1234", "PEM", "tok");
        let v: serde_json::Value = serde_yaml_ng::from_str(&text).unwrap();
        assert_eq!(v["users"][0]["user"]["token"], "tok");
        assert_eq!(
            v["clusters"][0]["cluster"]["server"],
            "https://127.0.0.1:1234"
        );
        assert_eq!(v["current-context"], "c1");
    }
}
