//! Charts in OCI registries, as Helm stores them: a manifest whose config has Helm's config
//! media type and whose one layer is the chart archive. Versions map to tags (`+` → `_`).

use oci_client::client::{Certificate, CertificateEncoding, ClientConfig, ClientProtocol};
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};

use super::repo::error_chain;
use super::{Cache, FetchError, FetchErrorKind, FetchOptions, read_ca_file, registry_credentials};
use crate::helm::semver::{parse_constraints, parse_version};

/// Helm's media type of a chart's config blob.
pub const HELM_CONFIG_MEDIA_TYPE: &str = "application/vnd.cncf.helm.config.v1+json";
/// Helm's media type of the chart archive layer.
pub const HELM_CHART_CONTENT_MEDIA_TYPE: &str =
    "application/vnd.cncf.helm.chart.content.v1.tar+gzip";

fn client(options: &FetchOptions) -> Result<Client, FetchError> {
    let mut config = ClientConfig {
        protocol: if options.plain_http {
            ClientProtocol::Http
        } else {
            ClientProtocol::Https
        },
        accept_invalid_certificates: options.insecure_skip_tls_verify,
        ..ClientConfig::default()
    };
    if let Some(pem) = read_ca_file(options)? {
        config.extra_root_certificates.push(Certificate {
            encoding: CertificateEncoding::Pem,
            data: pem,
        });
    }
    Ok(Client::new(config))
}

/// `--username`/`--password`, else the registry's entry in the registry config file.
fn auth(options: &FetchOptions, registry: &str) -> Result<RegistryAuth, FetchError> {
    if let Some(user) = &options.username {
        let password = options.password.clone().unwrap_or_default();
        return Ok(RegistryAuth::Basic(user.clone(), password));
    }
    let Some(config) = &options.registry_config else {
        return Ok(RegistryAuth::Anonymous);
    };
    Ok(match registry_credentials(config, registry)? {
        Some((user, password)) => RegistryAuth::Basic(user, password),
        None => RegistryAuth::Anonymous,
    })
}

fn failed(reference: &str, e: &OciDistributionError) -> FetchError {
    FetchError::new(
        kind_of(e),
        format!("failed to fetch oci://{reference}: {}", error_chain(e)),
    )
}

/// Whether a registry error can pass by itself, or names a missing chart or refused
/// credentials.
fn kind_of(e: &OciDistributionError) -> FetchErrorKind {
    use OciDistributionError as E;
    match e {
        E::RequestError(r) if r.is_builder() => FetchErrorKind::Invalid,
        E::RequestError(_) | E::IoError(_) => FetchErrorKind::Unreachable,
        E::ServerError { code, .. } => match code {
            404 => FetchErrorKind::NotFound,
            401 | 403 => FetchErrorKind::Denied,
            408 | 429 => FetchErrorKind::Unreachable,
            c if *c >= 500 => FetchErrorKind::Unreachable,
            _ => FetchErrorKind::Invalid,
        },
        E::UnauthorizedError { .. } | E::AuthenticationFailure(_) => FetchErrorKind::Denied,
        E::ImageManifestNotFoundError(_) => FetchErrorKind::NotFound,
        E::RegistryError { envelope, .. } => {
            envelope
                .errors
                .first()
                .map_or(FetchErrorKind::Invalid, |e| match e.code {
                    OciErrorCode::ManifestUnknown
                    | OciErrorCode::NameUnknown
                    | OciErrorCode::BlobUnknown
                    | OciErrorCode::NotFound => FetchErrorKind::NotFound,
                    OciErrorCode::Unauthorized | OciErrorCode::Denied => FetchErrorKind::Denied,
                    OciErrorCode::Toomanyrequests => FetchErrorKind::Unreachable,
                    _ => FetchErrorKind::Invalid,
                })
        }
        _ => FetchErrorKind::Invalid,
    }
}

/// Pulls the chart `reference` (without `oci://`) at `version` (exact, a range, or empty
/// for the highest stable tag); over plain HTTP when HTTPS cannot reach the registry and
/// the options allow the fallback.
pub(super) async fn pull(
    reference: &str,
    version: &str,
    options: &FetchOptions,
    cache: Option<&Cache>,
) -> Result<Vec<u8>, FetchError> {
    let over_https = pull_with(reference, version, options, cache).await;
    match over_https {
        Err(https) if falls_back_to_http(options, &https) => {
            let http = FetchOptions {
                plain_http: true,
                ..options.clone()
            };
            pull_with(reference, version, &http, cache)
                .await
                .map_err(|e| e.context(format!("{}; over plain HTTP", https.message)))
        }
        result => result,
    }
}

/// Whether a failed HTTPS pull is retried over plain HTTP: when the options allow it and
/// the registry could not be reached, as happens when it does not speak TLS.
fn falls_back_to_http(options: &FetchOptions, https: &FetchError) -> bool {
    options.plain_http_fallback && !options.plain_http && https.kind == FetchErrorKind::Unreachable
}

async fn pull_with(
    reference: &str,
    version: &str,
    options: &FetchOptions,
    cache: Option<&Cache>,
) -> Result<Vec<u8>, FetchError> {
    let client = client(options)?;
    let base: Reference = reference
        .parse()
        .map_err(|e| FetchError::invalid(format!("failed to fetch oci://{reference}: {e}")))?;
    let auth = auth(options, base.registry())?;
    if base.digest().is_some() {
        return pull_image(&client, &auth, &base, reference, cache).await;
    }
    let tagged = reference
        .rsplit('/')
        .next()
        .is_some_and(|last| last.contains(':'));
    let tag = if tagged {
        base.tag().unwrap_or("latest").to_string()
    } else if is_exact_version(version) {
        version.replace('+', "_")
    } else {
        resolve_tag(&client, &base, &auth, reference, version).await?
    };
    let image = Reference::with_tag(
        base.registry().to_string(),
        base.repository().to_string(),
        tag.clone(),
    );
    let name = if tagged {
        reference.to_string()
    } else {
        format!("{reference}:{tag}")
    };
    pull_image(&client, &auth, &image, &name, cache).await
}

/// Pulls the chart layer of one manifest (by tag or digest); `reference` names it in errors.
async fn pull_image(
    client: &Client,
    auth: &RegistryAuth,
    image: &Reference,
    reference: &str,
    cache: Option<&Cache>,
) -> Result<Vec<u8>, FetchError> {
    let (manifest, _) = client
        .pull_image_manifest(image, auth)
        .await
        .map_err(|e| failed(reference, &e))?;
    let Some(layer) = manifest
        .layers
        .iter()
        .find(|l| l.media_type == HELM_CHART_CONTENT_MEDIA_TYPE)
    else {
        return Err(FetchError::invalid(format!(
            "oci://{reference} is not a Helm chart: no layer of type {HELM_CHART_CONTENT_MEDIA_TYPE}"
        )));
    };
    if let Some(hit) = cache.and_then(|c| c.get(&layer.digest)) {
        return Ok(hit);
    }
    if layer.size < 0 || layer.size as u64 > crate::helm::chart::MAX_DECOMPRESSED_CHART_SIZE {
        return Err(FetchError::invalid(format!(
            "oci://{reference}: chart layer of {} bytes is too large",
            layer.size
        )));
    }
    let mut data = Vec::new();
    client
        .pull_blob(image, layer, &mut data)
        .await
        .map_err(|e| failed(reference, &e))?;
    let actual = Cache::digest(&data);
    if layer.digest.strip_prefix("sha256:") != Some(actual.as_str()) {
        return Err(FetchError::invalid(format!(
            "oci://{reference}: layer digest sha256:{actual} does not match {}",
            layer.digest
        )));
    }
    if let Some(cache) = cache {
        cache.put(&data);
    }
    Ok(data)
}

/// Whether `version` names one version rather than a range.
fn is_exact_version(version: &str) -> bool {
    !version.is_empty()
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
        && parse_version(version).is_ok()
}

/// Helm's tag resolution: tags are versions (`_` for `+`); the highest matching the range.
async fn resolve_tag(
    client: &Client,
    base: &Reference,
    auth: &RegistryAuth,
    reference: &str,
    range: &str,
) -> Result<String, FetchError> {
    let tags = client
        .list_tags(base, auth, None, None)
        .await
        .map_err(|e| failed(reference, &e))?;
    let constraints = parse_constraints(if range.is_empty() { "*" } else { range })
        .map_err(|e| FetchError::invalid(format!("invalid version range \"{range}\": {e}")))?;
    tags.tags
        .iter()
        .filter_map(|t| parse_version(&t.replace('_', "+")).ok().map(|v| (v, t)))
        .filter(|(v, _)| constraints.check(v))
        .max_by(|(a, _), (b, _)| a.compare(b))
        .map(|(_, t)| t.clone())
        .ok_or_else(|| {
            FetchError::new(
                FetchErrorKind::NotFound,
                format!("could not locate a version matching \"{range}\" for oci://{reference}"),
            )
        })
}

/// Pushes a chart archive as Helm does (`helm push`): used to seed registries in tests and by
/// tooling; returns the manifest URL.
pub async fn push(
    reference: &str,
    version: &str,
    archive: Vec<u8>,
    chart_json: Vec<u8>,
    options: &FetchOptions,
) -> Result<String, FetchError> {
    let client = client(options)?;
    let base: Reference = reference
        .parse()
        .map_err(|e| FetchError::invalid(format!("failed to push oci://{reference}: {e}")))?;
    let image = Reference::with_tag(
        base.registry().to_string(),
        base.repository().to_string(),
        version.replace('+', "_"),
    );
    let layer = oci_client::client::ImageLayer::new(
        archive,
        HELM_CHART_CONTENT_MEDIA_TYPE.to_string(),
        None,
    );
    let config =
        oci_client::client::Config::new(chart_json, HELM_CONFIG_MEDIA_TYPE.to_string(), None);
    client
        .push(
            &image,
            &[layer],
            config,
            &auth(options, base.registry())?,
            None,
        )
        .await
        .map(|r| r.manifest_url)
        .map_err(|e| failed(reference, &e))
}
