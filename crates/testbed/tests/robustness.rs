//! Malformed requests get Status errors and never take the server down.

use http::Request;
use testbed::Testbed;

async fn status_of(client: &kube::Client, req: Request<Vec<u8>>) -> u16 {
    match client.request_text(req).await {
        Ok(_) => 200,
        Err(kube::Error::Api(s)) => s.code,
        Err(other) => panic!("expected a Status answer, got {other:?}"),
    }
}

fn req(method: &str, path: &str, content_type: &str, body: Vec<u8>) -> Request<Vec<u8>> {
    Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", content_type)
        .body(body)
        .unwrap()
}

#[tokio::test]
async fn bad_requests_get_status_errors() {
    let bed = Testbed::start().await.unwrap();
    let client = bed.cluster().client();
    let cms = "/api/v1/namespaces/default/configmaps";
    let cases: Vec<(Request<Vec<u8>>, u16)> = vec![
        (
            req("POST", cms, "application/json", b"{not json".to_vec()),
            400,
        ),
        (
            req("POST", cms, "application/json", vec![0xff, 0xfe, 0x00]),
            400,
        ),
        (
            req("POST", cms, "application/json", b"[1,2,3]".to_vec()),
            400,
        ),
        (
            req(
                "POST",
                cms,
                "application/vnd.kubernetes.protobuf",
                b"k8s\0\x0a\xff".to_vec(),
            ),
            400,
        ),
        (req("POST", cms, "text/plain", b"hello".to_vec()), 415),
        (
            req("POST", cms, "application/json", vec![b' '; 4 * 1024 * 1024]),
            413,
        ),
        (
            req(
                "PATCH",
                &format!("{cms}/x"),
                "application/merge-patch+json",
                b"{}".to_vec(),
            ),
            404,
        ),
        (
            req(
                "PUT",
                &format!("{cms}/x"),
                "application/json",
                b"{\"metadata\":{\"resourceVersion\":\"abc\"}}".to_vec(),
            ),
            500,
        ),
        (
            req(
                "GET",
                "/api/v1/namespaces/default/nothings",
                "application/json",
                Vec::new(),
            ),
            404,
        ),
        (
            req(
                "GET",
                &format!("{cms}?limit=x&resourceVersion=zz"),
                "application/json",
                Vec::new(),
            ),
            500,
        ),
        (
            req(
                "DELETE",
                &format!("{cms}/x"),
                "application/json",
                b"{\"propagationPolicy\":7}".to_vec(),
            ),
            404,
        ),
        (
            req(
                "POST",
                "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                "application/json",
                b"null".to_vec(),
            ),
            400,
        ),
    ];
    for (request, expected) in cases {
        let what = format!("{} {}", request.method(), request.uri());
        assert_eq!(status_of(&client, request).await, expected, "{what}");
    }
    // Unknown groups answer with plain text, like kube-apiserver.
    let text = client
        .request_text(req(
            "GET",
            "/apis/nope.example.com/v1",
            "application/json",
            Vec::new(),
        ))
        .await;
    assert!(text.is_err());
    // The server still works.
    let ns: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client);
    assert!(ns.get("default").await.is_ok());
}
