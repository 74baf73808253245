//! Content negotiation of a resource request's answer: which form `Accept` asks for — the
//! object as served, a Table, or only its metadata (`PartialObjectMetadata`,
//! `PartialObjectMetadataList`) — chosen as kube-apiserver 1.33 chooses it
//! (`negotiation.NegotiateOutputMediaType` with the `RequestScope`'s restrictions), or 406
//! when no listed form can be served. The body is JSON whichever serialization was chosen:
//! clients that list YAML or protobuf list JSON too.

use crate::resources::ResourceDef;
use crate::server::Request;
use crate::status::ApiError;

/// The group of the forms a response can be converted to.
const META_GROUP: &str = "meta.k8s.io";

/// The version of `meta.k8s.io` a converted answer is asked in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetaVersion {
    /// `meta.k8s.io/v1`.
    V1,
    /// `meta.k8s.io/v1beta1`.
    V1beta1,
}

impl MetaVersion {
    fn parse(version: &str) -> Option<Self> {
        match version {
            "v1" => Some(Self::V1),
            "v1beta1" => Some(Self::V1beta1),
            _ => None,
        }
    }

    /// The `apiVersion` of documents in this version.
    pub fn api_version(self) -> &'static str {
        match self {
            Self::V1 => "meta.k8s.io/v1",
            Self::V1beta1 => "meta.k8s.io/v1beta1",
        }
    }
}

/// The form of the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// The object (or list) as the resource serves it.
    Object,
    /// `as=Table`: rows for kubectl.
    Table,
    /// `as=PartialObjectMetadata`: one object's metadata; a list refuses it.
    Metadata(MetaVersion),
    /// `as=PartialObjectMetadataList`: a list of metadata; one object refuses it.
    MetadataList(MetaVersion),
}

/// The serializations kube-apiserver offers for resources, in its order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Media {
    /// `application/json`.
    Json,
    /// `application/yaml`, which has no stream form.
    Yaml,
    /// `application/vnd.kubernetes.protobuf`.
    Protobuf,
}

const MEDIA: [Media; 3] = [Media::Json, Media::Yaml, Media::Protobuf];

impl Media {
    fn type_and_subtype(self) -> (&'static str, &'static str) {
        match self {
            Self::Json => ("application", "json"),
            Self::Yaml => ("application", "yaml"),
            Self::Protobuf => ("application", "vnd.kubernetes.protobuf"),
        }
    }

    /// Whether a watch can be served in it.
    fn streams(self) -> bool {
        self != Self::Yaml
    }
}

/// What negotiation chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Negotiated {
    /// The form of the answer.
    pub output: Output,
    /// The serialization of the chosen `Accept` entry.
    pub media: Media,
}

impl Negotiated {
    /// What a request without `Accept` gets: the object as JSON.
    pub const DEFAULT: Self = Self {
        output: Output::Object,
        media: Media::Json,
    };

    /// 406 for a watch whose chosen serialization has no stream form (YAML), as
    /// `NegotiateOutputMediaTypeStream` answers.
    pub fn check_stream(&self) -> Result<(), ApiError> {
        if self.media.streams() {
            return Ok(());
        }
        Err(ApiError::not_acceptable(
            "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch",
        ))
    }
}

/// Chooses the answer's form for a request to `res` from its `Accept` header.
pub fn negotiate(req: &Request, res: &ResourceDef) -> Result<Negotiated, ApiError> {
    let header = match req.header("accept") {
        None | Some("") => return Ok(Negotiated::DEFAULT),
        Some(h) => h,
    };
    for clause in parse_accept(header) {
        for media in MEDIA {
            if clause.matches(media)
                && let Some(output) = clause.output_for(media, res.crd.is_some())
            {
                return Ok(Negotiated { output, media });
            }
        }
    }
    Err(ApiError::not_acceptable(
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf",
    ))
}

/// One entry of `Accept`.
#[derive(Debug)]
struct Clause<'a> {
    main: &'a str,
    sub: &'a str,
    q: f64,
    params: Vec<(&'a str, &'a str)>,
}

/// The entries of `Accept` in the order they are tried, parsed as `goautoneg.ParseAccept`
/// parses them: entries that are no media range are dropped, `q` leaves the parameters, only
/// spaces are trimmed.
fn parse_accept(header: &str) -> Vec<Clause<'_>> {
    let mut clauses: Vec<Clause<'_>> = header.split(',').filter_map(parse_clause).collect();
    sort_clauses(&mut clauses);
    clauses
}

fn parse_clause(part: &str) -> Option<Clause<'_>> {
    let mut pieces = part.trim_matches(' ').split(';');
    let range = pieces.next().unwrap_or_default();
    let mut halves = range.split('/');
    let main = halves.next().unwrap_or_default().trim_matches(' ');
    let sub = match (halves.next(), halves.next()) {
        (None, None) if main == "*" => "*",
        (Some(sub), None) => sub.trim_matches(' '),
        _ => return None,
    };
    let mut clause = Clause {
        main,
        sub,
        q: 1.0,
        params: Vec::new(),
    };
    for param in pieces {
        // `key=value` only: no value, an empty one or a second `=` drops the parameter.
        let Some((key, value)) = param
            .split_once('=')
            .filter(|(_, v)| !v.is_empty() && !v.contains('='))
        else {
            continue;
        };
        let key = key.trim_matches(' ');
        if key == "q" {
            // Go parses the untrimmed text and takes 0 when that fails.
            clause.q = value.parse().unwrap_or(0.0);
        } else {
            clause.params.push((key, value.trim_matches(' ')));
        }
    }
    Some(clause)
}

/// Sorts as `goautoneg` does (Go's insertion sort for short slices, with its `Less`): higher
/// `q` first, then concrete types before wildcards; otherwise the header's order.
fn sort_clauses(clauses: &mut [Clause<'_>]) {
    let less = |a: &Clause<'_>, b: &Clause<'_>| {
        a.q > b.q || (a.main != "*" && b.main == "*") || (a.sub != "*" && b.sub == "*")
    };
    for i in 1..clauses.len() {
        let mut j = i;
        while j > 0 && less(&clauses[j], &clauses[j - 1]) {
            clauses.swap(j, j - 1);
            j -= 1;
        }
    }
}

impl Clause<'_> {
    fn matches(&self, media: Media) -> bool {
        let (main, sub) = media.type_and_subtype();
        (self.main == main && (self.sub == sub || self.sub == "*"))
            || (self.main == "*" && self.sub == "*")
    }

    /// The form this entry asks for when served as `media`, or `None` when the resource cannot
    /// answer it so (`acceptMediaTypeOptions` with `RequestScope.AllowsMediaTypeTransform`).
    fn output_for(&self, media: Media, custom: bool) -> Option<Output> {
        let (mut kind, mut group, mut version) = (None, None, None);
        for &(key, value) in &self.params {
            match key {
                "as" => kind = Some(value),
                "g" => group = Some(value),
                "v" => version = Some(value),
                "stream" if !value.is_empty() && (!media.streams() || value != "watch") => {
                    return None;
                }
                "sv" if !value.is_empty() && value != "v1" => return None,
                _ => {}
            }
        }
        if kind.is_none() && group.is_none() && version.is_none() {
            // Custom resources are not served as protobuf.
            return (!custom || media != Media::Protobuf).then_some(Output::Object);
        }
        if group != Some(META_GROUP) {
            return None;
        }
        let version = MetaVersion::parse(version.unwrap_or_default())?;
        match kind.unwrap_or_default() {
            "Table" => (media != Media::Protobuf).then_some(Output::Table),
            "PartialObjectMetadata" => Some(Output::Metadata(version)),
            "PartialObjectMetadataList" => Some(Output::MetadataList(version)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `header` asks a built-in resource for (`custom`: a custom resource), or `None` for 406.
    fn chosen(header: &str, custom: bool) -> Option<(Output, Media)> {
        parse_accept(header).iter().find_map(|clause| {
            MEDIA.into_iter().find_map(|media| {
                clause
                    .matches(media)
                    .then(|| clause.output_for(media, custom))
                    .flatten()
                    .map(|output| (output, media))
            })
        })
    }

    #[test]
    fn kube_rs_and_client_go_metadata_headers_choose_metadata_forms() {
        assert_eq!(
            chosen(
                "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
                false
            ),
            Some((Output::MetadataList(MetaVersion::V1), Media::Json))
        );
        let client_go = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
        assert_eq!(
            chosen(client_go, true),
            Some((Output::Metadata(MetaVersion::V1), Media::Protobuf))
        );
        assert_eq!(
            chosen(
                "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1",
                false
            ),
            Some((Output::Metadata(MetaVersion::V1beta1), Media::Json))
        );
    }

    #[test]
    fn unservable_entries_are_skipped_and_nothing_left_is_refused() {
        let other_version = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2";
        assert_eq!(chosen(other_version, false), None);
        assert_eq!(
            chosen(&format!("{other_version}, application/json"), false),
            Some((Output::Object, Media::Json))
        );
        assert_eq!(
            chosen(
                "application/json;as=PartialObjectMetadata;g=apps;v=v1",
                false
            ),
            None
        );
        assert_eq!(
            chosen("application/json;as=Pod;g=meta.k8s.io;v=v1", false),
            None
        );
        assert_eq!(chosen("application/json;g=meta.k8s.io;v=v1", false), None);
        assert_eq!(chosen("text/html", false), None);
        assert_eq!(
            chosen(
                "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1",
                false
            ),
            None
        );
        assert_eq!(chosen("application/vnd.kubernetes.protobuf", true), None);
        assert_eq!(chosen("application/yaml;stream=watch", false), None);
    }

    #[test]
    fn quality_and_wildcards_order_the_entries() {
        assert_eq!(
            chosen(
                "application/json;q=0.5, application/json;as=Table;g=meta.k8s.io;v=v1",
                false
            ),
            Some((Output::Table, Media::Json))
        );
        assert_eq!(
            chosen("*/*, application/yaml", false),
            Some((Output::Object, Media::Yaml))
        );
        assert_eq!(chosen("*/*", false), Some((Output::Object, Media::Json)));
        assert_eq!(
            chosen("application/*", false),
            Some((Output::Object, Media::Json))
        );
        assert_eq!(
            chosen("application/json;q=x", false).map(|c| c.1),
            Some(Media::Json)
        );
        assert_eq!(
            chosen(" application/json ;as=;g=meta.k8s.io=x", false),
            Some((Output::Object, Media::Json))
        );
    }
}
