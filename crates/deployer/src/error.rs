//! Errors of deployer work, classified the way the deployer contract needs them: a user-facing
//! operation, reason, message and error codes, and whether retrying can help.

use landscaper_api::core::ErrorCode;
use std::fmt;

/// Whether retrying can fix an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Retry with backoff until the progressing timeout.
    Transient,
    /// End the job as Failed at once.
    Never,
    /// The job was aborted through the operation annotation.
    Aborted,
}

/// An error that ends up in a DeployItem's `status.lastError`.
#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    /// The step that failed (`Reconcile`, `Delete`, `ApplyManifests`, ...).
    pub operation: String,
    /// A stable, machine-readable reason (`TargetNotFound`, `InvalidManifest`, ...).
    pub reason: String,
    /// What went wrong, naming the object and field.
    pub message: String,
    /// Well-known error codes.
    pub codes: Vec<ErrorCode>,
    /// Whether retrying can help.
    pub retry: Retry,
}

impl Error {
    /// A configuration problem: retrying the same input cannot help.
    pub fn config(
        operation: impl Into<String>,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        let codes = vec![ErrorCode::ConfigurationProblem];
        Self::classified(operation, reason, message, codes, Retry::Never)
    }

    /// A problem that may go away by itself (an API hiccup, an object that is not there yet).
    pub fn transient(
        operation: impl Into<String>,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self::classified(operation, reason, message, Vec::new(), Retry::Transient)
    }

    fn classified(
        operation: impl Into<String>,
        reason: impl Into<String>,
        message: impl Into<String>,
        codes: Vec<ErrorCode>,
        retry: Retry,
    ) -> Self {
        Self {
            operation: operation.into(),
            reason: reason.into(),
            message: message.into(),
            codes,
            retry,
        }
    }

    /// The progressing timeout of the item ran out.
    pub fn timeout(operation: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            operation: operation.into(),
            reason: "ProgressingTimeout".into(),
            message: message.into(),
            codes: vec![ErrorCode::Timeout],
            retry: Retry::Never,
        }
    }

    /// The job was aborted on request.
    pub fn aborted(operation: impl Into<String>) -> Self {
        Self {
            operation: operation.into(),
            reason: "Aborted".into(),
            message: "the job was aborted by the operation annotation".into(),
            codes: Vec::new(),
            retry: Retry::Aborted,
        }
    }

    /// An error of a Kubernetes API call about `what` (e.g. `ConfigMap default/foo`),
    /// classified by its status code.
    pub fn from_kube(operation: &str, what: &str, err: &kube::Error) -> Self {
        let message = format!("{what}: {}", describe_kube_error(err));
        match err {
            kube::Error::Api(status) => match status.code {
                401 => Self {
                    operation: operation.into(),
                    reason: "Unauthorized".into(),
                    message,
                    codes: vec![ErrorCode::Unauthorized],
                    retry: Retry::Never,
                },
                403 => Self {
                    operation: operation.into(),
                    reason: "Forbidden".into(),
                    message,
                    codes: vec![ErrorCode::ConfigurationProblem],
                    retry: Retry::Never,
                },
                400 | 422 => Self::config(operation, "Invalid", message),
                404 => Self::transient(operation, "NotFound", message),
                409 => Self::transient(operation, "Conflict", message),
                _ => Self::transient(operation, "ApiError", message),
            },
            // A request the job's interrupt ended (`contract::interruptible`).
            kube::Error::Service(source) => match source.downcast_ref::<Error>() {
                Some(stopped) => Self {
                    operation: operation.into(),
                    message: format!("{what}: {}", stopped.message),
                    ..stopped.clone()
                },
                None => Self::transient(operation, "ConnectionProblem", message),
            },
            _ => Self::transient(operation, "ConnectionProblem", message),
        }
    }

    /// Whether the job must end now.
    pub fn is_final(&self) -> bool {
        self.retry != Retry::Transient
    }

    /// The same error reported for another operation.
    pub fn with_operation(mut self, operation: impl Into<String>) -> Self {
        self.operation = operation.into();
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.operation, self.reason, self.message)
    }
}

impl std::error::Error for Error {}

/// The message of a Kubernetes API error without the wrapping noise.
pub fn describe_kube_error(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(status) if !status.message.is_empty() => {
            format!("{} ({})", status.message, status.code)
        }
        other => other.to_string(),
    }
}

/// Whether a kube error is a 404.
pub fn is_not_found(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(s) if s.code == 404)
}

/// Whether a kube error is a 409.
pub fn is_conflict(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(s) if s.code == 409)
}
