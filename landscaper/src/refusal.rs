//! Requests the API server refuses for good: an object built from user input (a blueprint's
//! rendering, a registration's template) that the server calls invalid is refused again on
//! every retry, so the controllers end the job (or report it) instead of retrying.

/// The server's message when it refused the request as invalid (400 Bad Request or 422
/// Invalid: the CRD's schema, an object name, a label); `None` for errors a retry may cure
/// (409 conflicts, 5xx, connection problems).
pub fn permanent(error: &kube::Error) -> Option<&str> {
    match error {
        kube::Error::Api(status) if matches!(status.code, 400 | 422) => Some(&status.message),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api_error(code: u16, message: &str) -> kube::Error {
        kube::Error::Api(Box::new(kube::core::Status {
            code,
            message: message.to_owned(),
            ..kube::core::Status::default()
        }))
    }

    #[test]
    fn invalid_requests_are_permanent_and_others_are_not() {
        let invalid = api_error(422, "Installation \"A\" is invalid");
        assert_eq!(permanent(&invalid), Some("Installation \"A\" is invalid"));
        assert!(permanent(&api_error(400, "bad request")).is_some());
        for transient in [409, 429, 500, 503] {
            assert_eq!(
                permanent(&api_error(transient, "again")),
                None,
                "{transient}"
            );
        }
        assert_eq!(
            permanent(&kube::Error::LinesCodecMaxLineLengthExceeded),
            None
        );
    }
}
