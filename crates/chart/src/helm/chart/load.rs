//! Loading charts from folders (honouring `.helmignore`) and gzipped tar archives (with
//! Helm's limits against hostile archives), then sorting the files into a [`Chart`].

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::{self, Read};
use std::path::Path;

use bytes::Bytes;

use super::ahead::AheadParser;
use super::ignore::{HELMIGNORE, Rules};
use super::metadata::API_VERSION_V1;
use super::{Chart, Contents, File, LoadError, file_text, same_bytes};
use crate::formats::tree::Map as DataMap;
use crate::{formats::yaml, parallel};

/// Largest total size of an unpacked archive (Helm's `MaxDecompressedChartSize`, 100 MiB).
pub const MAX_DECOMPRESSED_CHART_SIZE: u64 = 100 * 1024 * 1024;
/// Largest single file of a chart (Helm's `MaxDecompressedFileSize`, 5 MiB).
pub const MAX_DECOMPRESSED_FILE_SIZE: u64 = 5 * 1024 * 1024;

/// Symbolic links are followed as Helm does; this bounds the depth so a link cycle ends.
const MAX_DIR_DEPTH: usize = 64;

/// How many files a folder load holds open to read on first use; later ones are read at once,
/// so a chart cannot use up the process's file descriptors.
const MAX_DEFERRED_FILES: usize = 64;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

fn err(message: impl Into<String>) -> LoadError {
    LoadError(message.into())
}

/// Loads a chart from a folder or an archive file, as `helm template CHART` does for a path,
/// for a render that follows at once (see [`load_archive_to_render`]).
pub fn load(path: &Path) -> Result<Chart, LoadError> {
    let meta = fs::metadata(path).map_err(|e| path_error(path, &e))?;
    if meta.is_dir() {
        if !path.join("Chart.yaml").is_file() {
            let chart_yaml = absolute(path).join("Chart.yaml");
            return Err(err(format!(
                "unable to detect chart at {0}: open {0}: no such file or directory",
                chart_yaml.display()
            )));
        }
        return check_api_version(load_dir(path)?);
    }
    let raw = fs::read(path).map_err(|e| path_error(path, &e))?;
    if !raw.starts_with(&[0x1f, 0x8b]) {
        return Err(err(format!(
            "file '{}' does not appear to be a gzipped archive; got '{}'",
            path.display(),
            sniff_content_type(&raw)
        )));
    }
    check_api_version(load_archive_to_render(&raw)?)
}

/// Go's `filepath.Abs`: joined to the working folder and cleaned lexically (`.` and `..`
/// resolved without following links).
fn absolute(path: &Path) -> std::path::PathBuf {
    let joined = std::env::current_dir().unwrap_or_default().join(path);
    let mut clean = std::path::PathBuf::new();
    for part in joined.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                clean.pop();
            }
            other => clean.push(other),
        }
    }
    clean
}

/// Helm 4 picks a loader by the root chart's `apiVersion`: `v1` and `v2` (or none) are
/// charts it renders, `v3` is its experimental format whose dependencies `template` cannot
/// check, anything else is refused.
pub fn check_api_version(chart: Chart) -> Result<Chart, LoadError> {
    match chart.metadata.api_version.as_str() {
        "v1" | "v2" => Ok(chart),
        "v3" => Err(err(
            "an error occurred while checking for chart dependencies. You may need to run `helm dependency build` to fetch missing dependencies: unsupported chart dependency type",
        )),
        _ => Err(err("unsupported chart version")),
    }
}

/// An I/O failure at `path`, worded as Go words it.
fn path_error(path: &Path, e: &std::io::Error) -> LoadError {
    err(format!("{}: {}", path.display(), io_text(e)))
}

/// Go's error text for common I/O failures (`stat x: no such file or directory`).
fn io_text(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    }
}

/// A rough `http.DetectContentType`, for the "not a gzipped archive" message.
fn sniff_content_type(data: &[u8]) -> &'static str {
    let head = &data[..data.len().min(512)];
    if std::str::from_utf8(head).is_ok() && !head.contains(&0) {
        "text/plain; charset=utf-8"
    } else {
        "application/octet-stream"
    }
}

/// Loads a chart folder: `.helmignore` rules plus Helm's defaults decide which files count.
/// Its template files are parsed ahead for a render that follows (see
/// [`load_archive_to_render`]).
pub fn load_dir(dir: &Path) -> Result<Chart, LoadError> {
    let mut rules = Rules::default();
    let ignore_file = dir.join(HELMIGNORE);
    if ignore_file.is_file() {
        let text = fs::read_to_string(&ignore_file).map_err(|e| path_error(&ignore_file, &e))?;
        rules = Rules::parse(&text).map_err(err)?;
    }
    rules.add_defaults();
    let ahead = AheadParser::start();
    // The root values.yaml is read first and parsed while the walk reads the rest: it is the
    // largest file parsed before rendering (kube-prometheus-stack's is 200 KB, mostly
    // comments), and the walk reaches it last.
    let root_values = read_root_values(dir, &rules);
    let (files, root_values) = std::thread::scope(|scope| {
        // A thread that cannot be started leaves the file to be parsed in place.
        let parsing = root_values.clone().and_then(|data| {
            std::thread::Builder::new()
                .spawn_scoped(scope, move || {
                    let parsed = parse_values_yaml(&data);
                    (data, parsed)
                })
                .ok()
        });
        let mut walk = FolderWalk {
            rules: &rules,
            ahead: &ahead,
            root_values,
            files: Vec::new(),
            deferred: 0,
        };
        let walked = walk.walk(dir, "", 0);
        // A parse that panicked is parsed again in place, and panics there.
        let parsed = parsing.and_then(|parsing| parsing.join().ok());
        walked.map(|()| (walk.files, parsed))
    })?;
    let mut values = parse_values_files(&files, root_values);
    let mut chart = load_tree(files, &mut values, "")?;
    chart.parsed_ahead = ahead.finish();
    Ok(chart)
}

/// The chart's own `values.yaml`, if the walk will load it and it reads cleanly (otherwise the
/// walk reads it in turn and reports what is wrong).
fn read_root_values(dir: &Path, rules: &Rules) -> Option<Bytes> {
    let name = "values.yaml";
    if rules.ignore(name, false) {
        return None;
    }
    let path = dir.join(name);
    if !fs::metadata(&path).ok()?.is_file() {
        return None;
    }
    read_folder_file(&path, name).ok().map(|(data, _)| data)
}

/// A chart folder being read in Go's `filepath.Walk` order.
struct FolderWalk<'a> {
    rules: &'a Rules,
    ahead: &'a AheadParser,
    /// The root `values.yaml`, read already.
    root_values: Option<Bytes>,
    files: Vec<File>,
    /// How many files are held open to be read on first use.
    deferred: usize,
}

/// Whether the chart file `rel` is in the `crds/` folder of the chart or of a subchart, which
/// the folder loader opens but leaves to be read on first use.
fn is_crd_file(rel: &str) -> bool {
    own_path(rel).is_some_and(|own| own.starts_with("crds/"))
}

impl FolderWalk<'_> {
    fn walk(&mut self, dir: &Path, prefix: &str, depth: usize) -> Result<(), LoadError> {
        if depth > MAX_DIR_DEPTH {
            return Err(err(format!(
                "{}: too many levels of nested folders or symbolic links",
                dir.display()
            )));
        }
        let read = fs::read_dir(dir).map_err(|e| path_error(dir, &e))?;
        let mut entries: Vec<(String, fs::FileType)> = Vec::new();
        for entry in read {
            let entry = entry.map_err(|e| path_error(dir, &e))?;
            // The type comes with the directory listing: only links cost a stat of their own.
            let file_type = entry
                .file_type()
                .map_err(|e| path_error(&entry.path(), &e))?;
            entries.push((entry.file_name().to_string_lossy().into_owned(), file_type));
        }
        // Go's filepath.Walk visits names in byte order.
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        for (name, file_type) in entries {
            let path = dir.join(&name);
            let rel = format!("{prefix}{name}");
            // Links are followed, to what they point at.
            let file_type = if file_type.is_symlink() {
                fs::metadata(&path)
                    .map_err(|e| path_error(&path, &e))?
                    .file_type()
            } else {
                file_type
            };
            if file_type.is_dir() {
                if !self.rules.ignore(&rel, true) {
                    self.walk(&path, &format!("{rel}/"), depth + 1)?;
                }
                continue;
            }
            if self.rules.ignore(&rel, false) {
                continue;
            }
            // Not opened: opening a FIFO would wait for a writer.
            if !file_type.is_file() {
                return Err(irregular_file(&path));
            }
            let read_already = if rel == "values.yaml" {
                self.root_values.take()
            } else {
                None
            };
            let (data, meta) = match read_already {
                Some(data) => {
                    let meta = fs::metadata(&path).map_err(|e| path_error(&path, &e))?;
                    (Contents::from(data), meta)
                }
                None if self.deferred < MAX_DEFERRED_FILES && is_crd_file(&rel) => {
                    self.deferred += 1;
                    let (file, meta) = open_folder_file(&path, &rel)?;
                    (Contents::deferred(rel.clone(), file, meta.len()), meta)
                }
                None => {
                    let (data, meta) = read_folder_file(&path, &rel)?;
                    self.ahead.offer(&rel, &data);
                    (Contents::from(data), meta)
                }
            };
            self.files.push(File {
                name: rel,
                data,
                modified: meta
                    .modified()
                    .ok()
                    .and_then(|t| jiff::Timestamp::try_from(t).ok()),
            });
        }
        Ok(())
    }
}

/// The contents of the folder file at `path` (`rel` in the chart), without a byte order mark,
/// and what the open file's stat says of it; irregular and oversized files are refused. The
/// caller has seen that `path` is a regular file: opening a FIFO would wait for a writer.
fn read_folder_file(path: &Path, rel: &str) -> Result<(Bytes, fs::Metadata), LoadError> {
    let (file, meta) = open_folder_file(path, rel)?;
    Ok((read_open_file(file, meta.len(), rel)?, meta))
}

/// The folder file at `path` (`rel` in the chart), open, and what its stat says of it;
/// irregular and oversized files are refused, as [`read_folder_file`] refuses them.
fn open_folder_file(path: &Path, rel: &str) -> Result<(fs::File, fs::Metadata), LoadError> {
    let file = fs::File::open(path).map_err(|e| {
        // As Helm, which stats before it reads, a file too large is refused as such.
        match fs::metadata(path) {
            Ok(meta) if meta.len() > MAX_DECOMPRESSED_FILE_SIZE => too_large_file(rel),
            _ => read_error(rel, &e),
        }
    })?;
    let meta = file.metadata().map_err(|e| read_error(rel, &e))?;
    if !meta.is_file() {
        return Err(irregular_file(path));
    }
    if meta.len() > MAX_DECOMPRESSED_FILE_SIZE {
        return Err(too_large_file(rel));
    }
    Ok((file, meta))
}

/// The contents of the open `file`, chart file `rel` stated at `len` bytes, without a byte
/// order mark; refused if it has grown beyond the size limit since.
pub(super) fn read_open_file(file: impl Read, len: u64, rel: &str) -> Result<Bytes, LoadError> {
    let data = read_shared(file.take(MAX_DECOMPRESSED_FILE_SIZE + 1), len)
        .map_err(|e| read_error(rel, &e))?;
    if data.len() as u64 > MAX_DECOMPRESSED_FILE_SIZE {
        return Err(too_large_file(rel));
    }
    Ok(strip_bom(data))
}

fn read_error(rel: &str, e: &io::Error) -> LoadError {
    err(format!("error reading {rel}: {}", io_text(e)))
}

fn irregular_file(path: &Path) -> LoadError {
    err(format!(
        "cannot load irregular file {} as it has file mode type bits set",
        path.display()
    ))
}

/// Helm names the file by its base name.
fn too_large_file(rel: &str) -> LoadError {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    err(format!(
        "chart file {} is larger than the maximum file size {MAX_DECOMPRESSED_FILE_SIZE}",
        crate::engine::value::format::quote(name)
    ))
}

fn strip_bom(data: Bytes) -> Bytes {
    if data.starts_with(UTF8_BOM) {
        data.slice(UTF8_BOM.len()..)
    } else {
        data
    }
}

/// Reads `reader` to its end, into memory reserved at the `expected` size (stat'ed or
/// declared) so that the bytes land in place, once. A size that changed since it was stated
/// still reads whole; a stated size above a chart file's limit is not trusted for the
/// reservation (the reader bounds what is read).
fn read_shared(mut reader: impl Read, expected: u64) -> io::Result<Bytes> {
    let expected = usize::try_from(expected.min(MAX_DECOMPRESSED_FILE_SIZE)).unwrap_or(0);
    let mut data = Vec::with_capacity(expected);
    reader.read_to_end(&mut data)?;
    Ok(Bytes::from(data))
}

/// Loads a chart from the bytes of a gzipped tar archive whose entries sit under one top
/// folder (`mychart/Chart.yaml`, ...).
pub fn load_archive(bytes: &[u8]) -> Result<Chart, LoadError> {
    load_files(archive_files(bytes, &AheadParser::off())?)
}

/// [`load_archive`] for a render that follows at once: the template files are parsed on a
/// helper thread while the archive is read, and the first render takes them. A chart kept for
/// later renders (in a cache) should come from [`load_archive`]: until it is rendered, it
/// holds the parse trees.
pub fn load_archive_to_render(bytes: &[u8]) -> Result<Chart, LoadError> {
    let ahead = AheadParser::start();
    let mut chart = load_files(archive_files(bytes, &ahead)?)?;
    chart.parsed_ahead = ahead.finish();
    Ok(chart)
}

/// The folder a chart archive keeps its files in (`demo` for `demo/Chart.yaml`), from its
/// first entry: what names a chart whose `Chart.yaml` cannot be read.
pub fn archive_folder(bytes: &[u8]) -> Option<String> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    let entry = archive.entries().ok()?.next()?.ok()?;
    let path = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
    path.split(['/', '\\'])
        .next()
        .filter(|folder| !folder.is_empty())
        .map(str::to_string)
}

/// The files of a chart archive, each template file offered to `ahead` as it is read.
fn archive_files(bytes: &[u8], ahead: &AheadParser) -> Result<Vec<File>, LoadError> {
    let gz = flate2::read::GzDecoder::new(bytes);
    let mut archive = tar::Archive::new(gz);
    let entries = archive.entries().map_err(|e| err(gzip_text(&e)))?;
    let mut files = Vec::new();
    let mut remaining = MAX_DECOMPRESSED_CHART_SIZE;
    for entry in entries {
        let mut entry = entry.map_err(|e| err(gzip_text(&e)))?;
        let kind = entry.header().entry_type();
        if kind.is_dir() || kind.is_pax_global_extensions() || kind.is_pax_local_extensions() {
            continue;
        }
        let raw_name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let name = archive_entry_name(&raw_name)?;
        // The entry's size, a PAX record's where there is one (Go's `Header.Size`).
        let size = entry.size();
        if size > remaining {
            return Err(too_large());
        }
        if size > MAX_DECOMPRESSED_FILE_SIZE {
            return Err(err(format!(
                "decompressed chart file {} is larger than the maximum file size {MAX_DECOMPRESSED_FILE_SIZE}",
                crate::engine::value::format::quote(&raw_name)
            )));
        }
        // Never trust the header's size: read at most what is left of the budget.
        let data =
            read_shared((&mut entry).take(remaining), size).map_err(|e| err(gzip_text(&e)))?;
        let read = data.len() as u64;
        remaining -= read;
        if read < size || remaining == 0 {
            return Err(too_large());
        }
        let modified = entry
            .header()
            .mtime()
            .ok()
            .and_then(|s| jiff::Timestamp::from_second(i64::try_from(s).ok()?).ok());
        let data = strip_bom(data);
        ahead.offer(&name, &data);
        files.push(File {
            name,
            data: data.into(),
            modified,
        });
    }
    if files.is_empty() {
        return Err(err("no files in chart archive"));
    }
    Ok(files)
}

fn too_large() -> LoadError {
    err(format!(
        "decompressed chart is larger than the maximum size {MAX_DECOMPRESSED_CHART_SIZE}"
    ))
}

fn gzip_text(e: &std::io::Error) -> String {
    let text = e.to_string();
    if text.contains("invalid gzip header") {
        "gzip: invalid header".to_string()
    } else {
        text
    }
}

/// The chart-relative name of an archive entry, refusing what Helm refuses: absolute paths,
/// escapes from the chart folder, drive letters, and a `Chart.yaml` outside a folder.
fn archive_entry_name(raw: &str) -> Result<String, LoadError> {
    let delimiter = if raw.contains('\\') { '\\' } else { '/' };
    let parts: Vec<&str> = raw.split(delimiter).collect();
    let joined = parts[1..].join("/");
    if joined.starts_with('/') {
        return Err(err("chart illegally contains absolute paths"));
    }
    let cleaned = clean_path(&joined);
    if cleaned == "." {
        return Err(err(format!(
            "chart illegally contains content outside the base directory: {}",
            crate::engine::value::format::quote(raw)
        )));
    }
    if cleaned.starts_with("..") {
        return Err(err("chart illegally references parent directory"));
    }
    let b = cleaned.as_bytes();
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        return Err(err("chart contains illegally named files"));
    }
    if parts[0] == "Chart.yaml" {
        return Err(err("chart yaml not in base directory"));
    }
    Ok(cleaned)
}

/// Go's `path.Clean` for relative paths.
fn clean_path(p: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if matches!(out.last(), Some(last) if *last != "..") {
                    out.pop();
                } else {
                    out.push("..");
                }
            }
            s => out.push(s),
        }
    }
    if out.is_empty() {
        ".".to_string()
    } else {
        out.join("/")
    }
}

/// Sorts loaded files into a chart (Helm's `LoadFiles`) and validates its metadata.
pub fn load_files(files: Vec<File>) -> Result<Chart, LoadError> {
    let mut values = parse_values_files(&files, None);
    load_tree(files, &mut values, "")
}

/// Parsed `values.yaml` files by name, or the errors that parsing them gave.
type ParsedValues = HashMap<String, Result<DataMap, yaml::YamlError>>;

/// The root `values.yaml` parsed already: its contents and what parsing them gave.
type ParsedRootValues = (Bytes, Result<DataMap, yaml::YamlError>);

/// Parses the `values.yaml` files of a chart and of the subchart folders below it, on all
/// cores: a root chart's values can take as long to read as all its subcharts' together. A
/// name that occurs twice (an archive may hold it twice) is left to be parsed in place, so
/// that each copy is read as Helm reads it. `root`, if given, is the root file's parse, used
/// if it is of the very contents loaded.
fn parse_values_files(files: &[File], root: Option<ParsedRootValues>) -> ParsedValues {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for file in files.iter().filter(|file| is_values_file(&file.name)) {
        *seen.entry(file.name.as_str()).or_default() += 1;
    }
    let mut ready = ParsedValues::new();
    if let Some((data, parsed)) = root
        && seen.get("values.yaml") == Some(&1)
        && files.iter().any(|file| {
            file.name == "values.yaml" && file.data.read().is_ok_and(|d| same_bytes(d, &data))
        })
    {
        ready.insert("values.yaml".to_string(), parsed);
    }
    // A file that cannot be read is left to loading the chart, which reports it.
    let values: Vec<(&str, &Bytes)> = files
        .iter()
        .filter(|file| seen.get(file.name.as_str()) == Some(&1) && !ready.contains_key(&file.name))
        .filter_map(|file| Some((file.name.as_str(), file.data.read().ok()?)))
        .collect();
    let parsed = parallel::map_ordered(
        &values,
        |(_, data)| data.len(),
        |(_, data)| parse_values_yaml(data),
    );
    ready.extend(values.iter().map(|(name, _)| name.to_string()).zip(parsed));
    ready
}

/// A chart's `values.yaml`, read as Helm's `LoadValues` reads it (all its documents).
fn parse_values_yaml(data: &[u8]) -> Result<DataMap, yaml::YamlError> {
    yaml::parse_values_file("values.yaml", &file_text(data))
}

/// Whether `name` is where a chart or a subchart folder keeps its values: `values.yaml`,
/// `charts/a/values.yaml`, `charts/a/charts/b/values.yaml` and so on.
fn is_values_file(name: &str) -> bool {
    own_path(name) == Some("values.yaml")
}

/// The path of `name` within the chart or subchart folder that holds it: `templates/x.yaml`
/// for `charts/a/charts/b/templates/x.yaml`; `None` below the subchart folders Helm skips
/// (starting with `_` or `.`).
pub(super) fn own_path(name: &str) -> Option<&str> {
    let mut rest = name;
    loop {
        let Some((sub, inner)) = rest
            .strip_prefix("charts/")
            .and_then(|sub| sub.split_once('/'))
        else {
            return Some(rest);
        };
        if sub.starts_with('_') || sub.starts_with('.') {
            return None;
        }
        rest = inner;
    }
}

/// [`load_files`] for the chart whose files are named from `prefix` on (`charts/sub/` for a
/// subchart), taking its values from those parsed ahead.
fn load_tree(
    files: Vec<File>,
    values: &mut ParsedValues,
    prefix: &str,
) -> Result<Chart, LoadError> {
    let mut chart = Chart::default();
    let mut has_metadata = false;
    let mut subcharts: BTreeMap<String, Vec<File>> = BTreeMap::new();
    for file in files {
        match file.name.as_str() {
            "Chart.yaml" => {
                chart.modified = file.modified;
                let map = parse_metadata_file(&file, "Chart.yaml")?;
                chart
                    .metadata
                    .merge_from(&map)
                    .map_err(|e| err(format!("cannot load Chart.yaml: {e}")))?;
                if chart.metadata.api_version.is_empty() {
                    chart.metadata.api_version = API_VERSION_V1.to_string();
                }
                has_metadata = true;
            }
            "Chart.lock" => {}
            "values.yaml" => {
                let parsed = match values.remove(&format!("{prefix}values.yaml")) {
                    Some(parsed) => parsed,
                    None => parse_values_yaml(file.data.read()?),
                };
                chart.values = parsed.map_err(|e| {
                    err(format!(
                        "cannot load values.yaml: {}",
                        e.values_file_message()
                    ))
                })?;
            }
            "values.schema.json" => {
                chart.schema_modified = file.modified;
                chart.schema = Some(file.data.read()?.to_vec());
            }
            "requirements.yaml" => {
                let map = parse_metadata_file(&file, "requirements.yaml")?;
                chart
                    .metadata
                    .merge_from(&map)
                    .map_err(|e| err(format!("cannot load requirements.yaml: {e}")))?;
                if chart.metadata.api_version == API_VERSION_V1 {
                    chart.files.push(file);
                }
            }
            "requirements.lock" => {
                if chart.metadata.api_version == API_VERSION_V1 {
                    chart.files.push(file);
                }
            }
            name if name.starts_with("templates/") => chart.templates.push(file),
            name if name.starts_with("charts/") => {
                if name.ends_with(".prov") {
                    chart.files.push(file);
                    continue;
                }
                let rest = &name["charts/".len()..];
                let sub = rest.split('/').next().unwrap_or(rest).to_string();
                subcharts.entry(sub).or_default().push(File {
                    name: rest.to_string(),
                    data: file.data,
                    modified: file.modified,
                });
            }
            _ => chart.files.push(file),
        }
    }
    if !has_metadata {
        return Err(err("Chart.yaml file is missing"));
    }
    chart.metadata.validate().map_err(err)?;
    for (name, files) in subcharts {
        if name.starts_with('_') || name.starts_with('.') {
            continue;
        }
        let loaded = if name.ends_with(".tgz") {
            match files.into_iter().next() {
                Some(file) if file.name == name => file
                    .data
                    .read()
                    .and_then(|data| archive_files(data, &AheadParser::off()))
                    .and_then(load_files),
                Some(file) => {
                    return Err(err(format!(
                        "error unpacking subchart tar in {}: expected {name}, got {}",
                        chart.name(),
                        file.name
                    )));
                }
                None => continue,
            }
        } else {
            let inner: Vec<File> = files
                .into_iter()
                .filter_map(|f| {
                    f.name.split_once('/').map(|(_, rest)| File {
                        name: rest.to_string(),
                        data: f.data,
                        modified: f.modified,
                    })
                })
                .collect();
            load_tree(inner, values, &format!("{prefix}charts/{name}/"))
        };
        let sub = loaded.map_err(|e| {
            err(format!(
                "error unpacking subchart {name} in {}: {e}",
                chart.name()
            ))
        })?;
        chart.dependencies.push(sub);
    }
    Ok(chart)
}

fn parse_metadata_file(file: &File, what: &str) -> Result<crate::formats::tree::Map, LoadError> {
    let text = file_text(file.data.read()?);
    super::metadata::parse_metadata(&text)
        .map_err(|e| err(format!("cannot load {what}: {}", e.helm_message())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out its bytes a few at a time, interrupted before each read, as a slow pipe
    /// might.
    struct Trickle<'a> {
        bytes: &'a [u8],
        interrupt: bool,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.interrupt = !self.interrupt;
            if self.interrupt {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let n = buf.len().min(3).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    #[test]
    fn files_read_whole_whatever_size_was_stated() {
        let text = b"apiVersion: v2\nname: demo\n";
        for stated in [text.len(), 0, 5, text.len() - 1, text.len() + 1, 1000] {
            let reader = Trickle {
                bytes: text,
                interrupt: false,
            };
            let data = read_shared(reader, stated as u64).unwrap();
            assert_eq!(&data[..], text, "stated size {stated}");
        }
    }

    #[test]
    fn folder_files_load_whole_without_a_byte_order_mark() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, data: &[u8]| {
            let path = dir.path().join(name);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, data).unwrap();
        };
        let line = b"# some padding of a large template file\n";
        let big: Vec<u8> = line.iter().copied().cycle().take(300_000).collect();
        let mut big_with_bom = UTF8_BOM.to_vec();
        big_with_bom.extend_from_slice(&big);
        write("Chart.yaml", CHART);
        write("templates/big.yaml", &big_with_bom);
        write("templates/bom-only.yaml", UTF8_BOM);
        write("crds/big.yaml", &big);
        let chart = load_dir(dir.path()).unwrap();
        let data = |files: &[File], name: &str| {
            files
                .iter()
                .find(|f| f.name == name)
                .map(|f| f.data.read().unwrap().clone())
                .unwrap()
        };
        assert_eq!(data(&chart.templates, "templates/big.yaml"), big);
        assert_eq!(
            data(&chart.templates, "templates/bom-only.yaml"),
            b"".as_slice()
        );
        assert_eq!(data(&chart.files, "crds/big.yaml"), big);
    }

    #[test]
    fn a_byte_order_mark_is_dropped_from_what_was_read() {
        let chart = load_archive(&tgz(&[
            ("demo/Chart.yaml", CHART),
            ("demo/templates/x.yaml", b"\xEF\xBB\xBFkind: X\n"),
        ]))
        .unwrap();
        assert_eq!(chart.templates[0].data.read().unwrap(), &b"kind: X\n"[..]);
    }

    fn tgz(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (i, (name, data)) in entries.iter().enumerate() {
            let mut header = tar::Header::new_gnu();
            // Entry i was modified at (i + 1) million seconds after the epoch.
            header.set_mtime(1_000_000 * (i as u64 + 1));
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            header.set_entry_type(tar::EntryType::Regular);
            // Raw names so hostile paths reach the loader unchanged.
            let bytes = name.as_bytes();
            header.as_old_mut().name[..bytes.len()].copy_from_slice(bytes);
            header.set_cksum();
            builder.append(&header, *data).unwrap();
        }
        let tar = builder.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &tar).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn templates_parsed_while_loading_are_what_the_render_uses() {
        let entries: &[(&str, &[u8])] = &[
            ("demo/Chart.yaml", b"apiVersion: v2\nname: demo\nversion: 0.1.0\ndependencies:\n- name: up\n- name: down\n  condition: down.enabled\n"),
            ("demo/templates/_helpers.tpl", b"{{ define \"who\" }}{{ .Values.who }}{{ end }}"),
            ("demo/templates/a.yaml", b"who: {{ include \"who\" . }}\n"),
            ("demo/templates/broken.yaml", b"{{ if }}"),
            ("demo/charts/up/Chart.yaml", b"apiVersion: v2\nname: up\nversion: 1.0.0\n"),
            ("demo/charts/up/templates/b.yaml", b"up: {{ .Chart.Name | upper }}\n"),
            ("demo/charts/down/Chart.yaml", b"apiVersion: v2\nname: down\nversion: 1.0.0\n"),
            ("demo/charts/down/templates/c.yaml", b"down: {{ .Chart.Name }}\n"),
            ("demo/charts/_skip/templates/d.yaml", b"skipped: true\n"),
            ("demo/values.yaml", b"who: me\ndown:\n  enabled: false\n"),
        ];
        let helper = std::thread::available_parallelism().map_or(1, usize::from) > 1;
        let chart = load_archive_to_render(&tgz(entries)).unwrap();
        // Every template file of the chart and its subchart folders but the broken one (the
        // count waits for the helper to parse them all; a render would stop it early).
        assert_eq!(chart.parsed_ahead.untaken(), if helper { 4 } else { 0 });
        let mut templates: Vec<&File> = chart.templates.iter().collect();
        for dep in &chart.dependencies {
            templates.extend(&dep.templates);
        }
        let contents: Vec<&Bytes> = templates.iter().map(|t| t.data.read().unwrap()).collect();
        let parsed: Vec<&str> = templates
            .iter()
            .zip(chart.parsed_ahead.take_all(&contents))
            .filter(|(_, parsed)| parsed.is_some())
            .map(|(t, _)| t.name.as_str())
            .collect();
        let want = [
            "templates/_helpers.tpl",
            "templates/a.yaml",
            "templates/c.yaml",
            "templates/b.yaml",
        ];
        assert_eq!(parsed, if helper { &want[..] } else { &[] });
        assert!(
            load_archive(&tgz(entries))
                .unwrap()
                .parsed_ahead
                .take_all(&contents)
                .is_empty()
        );

        let chart = load_archive_to_render(&tgz(entries)).unwrap();
        let options = crate::helm::render::TemplateOptions::default();
        let error =
            crate::helm::render::install(&chart, &DataMap::default(), &options).unwrap_err();
        assert!(
            error
                .message
                .contains("(demo/templates/broken.yaml:1): missing value for if"),
            "{}",
            error.message
        );

        let mut fixed = entries.to_vec();
        fixed.retain(|(name, _)| !name.ends_with("broken.yaml"));
        let chart = load_archive_to_render(&tgz(&fixed)).unwrap();
        assert_eq!(chart.parsed_ahead.untaken(), if helper { 4 } else { 0 });
        let release = crate::helm::render::install(&chart, &DataMap::default(), &options).unwrap();
        // The disabled subchart's file is not kept for later renders.
        assert_eq!(chart.parsed_ahead.untaken(), 0);
        let in_place = load_archive(&tgz(&fixed)).unwrap();
        assert_eq!(in_place.parsed_ahead.untaken(), 0);
        let want = crate::helm::render::install(&in_place, &DataMap::default(), &options).unwrap();
        assert_eq!(release.manifest, want.manifest);
        assert!(
            release.manifest.contains("who: me") && release.manifest.contains("up: UP"),
            "{}",
            release.manifest
        );
    }

    #[test]
    fn a_broken_archive_still_names_its_chart_folder() {
        let archive = tgz(&[("demo/Chart.yaml", b"name: [\n")]);
        assert!(load_archive(&archive).is_err());
        assert_eq!(archive_folder(&archive).as_deref(), Some("demo"));
        assert_eq!(archive_folder(b"not a gzip stream"), None);
    }

    #[test]
    fn archive_times_are_kept_as_helm_records_them() {
        let chart = load_archive(&tgz(&[
            ("demo/Chart.yaml", CHART),
            ("demo/values.schema.json", b"{}"),
            ("demo/templates/a.yaml", b"a: 1\n"),
        ]))
        .unwrap();
        let at = |n: i64| Some(jiff::Timestamp::from_second(n * 1_000_000).unwrap());
        assert_eq!(
            (
                chart.modified,
                chart.schema_modified,
                chart.templates[0].modified
            ),
            (at(1), at(2), at(3))
        );
    }

    const CHART: &[u8] = b"apiVersion: v2\nname: demo\nversion: 0.1.0\n";

    #[test]
    fn archives_load_with_subcharts_and_files() {
        let sub = tgz(&[("sub/Chart.yaml", b"name: sub\nversion: 1.0.0\n")]);
        let chart = load_archive(&tgz(&[
            ("demo/Chart.yaml", CHART),
            ("demo/values.yaml", b"a: 1\n"),
            ("demo/templates/x.yaml", b"x"),
            ("demo/README.md", b"hi"),
            ("demo/charts/sub-1.0.0.tgz", &sub),
        ]))
        .unwrap();
        assert_eq!(chart.name(), "demo");
        assert_eq!(chart.templates[0].name, "templates/x.yaml");
        assert_eq!(chart.files[0].name, "README.md");
        assert_eq!(chart.dependencies[0].metadata.api_version, "v1");
    }

    #[test]
    fn values_files_are_known_at_every_subchart_depth() {
        for name in [
            "values.yaml",
            "charts/a/values.yaml",
            "charts/a/charts/b/values.yaml",
        ] {
            assert!(is_values_file(name), "{name}");
        }
        for name in [
            "templates/values.yaml",
            "charts/values.yaml",
            "charts/a/files/values.yaml",
            "charts/_a/values.yaml",
            "charts/a/charts/.b/values.yaml",
            "values.yml",
        ] {
            assert!(!is_values_file(name), "{name}");
        }
    }

    #[test]
    fn subchart_values_parsed_ahead_land_in_their_own_chart() {
        let big = format!("pad: {}\n", "x".repeat(parallel::MIN_PARALLEL_SIZE));
        let files = archive_files(
            &tgz(&[
                ("demo/Chart.yaml", CHART),
                ("demo/values.yaml", big.as_bytes()),
                (
                    "demo/charts/a/Chart.yaml",
                    b"apiVersion: v2\nname: a\nversion: 1.0.0\n",
                ),
                ("demo/charts/a/values.yaml", b"who: a\n"),
                (
                    "demo/charts/a/charts/b/Chart.yaml",
                    b"apiVersion: v2\nname: b\nversion: 1.0.0\n",
                ),
                ("demo/charts/a/charts/b/values.yaml", b"who: b\n"),
                // Helm skips subchart folders starting with `_`: their values are never read.
                ("demo/charts/_skip/values.yaml", b"who: [broken\n"),
            ]),
            &AheadParser::off(),
        )
        .unwrap();
        let mut values = parse_values_files(&files, None);
        assert_eq!(values.len(), 3);
        let chart = load_tree(files, &mut values, "").unwrap();
        // Every chart took the values parsed for it.
        assert!(values.is_empty(), "{:?}", values.keys());
        let a = &chart.dependencies[0];
        let b = &a.dependencies[0];
        let who = |c: &Chart| c.values.get("who").cloned();
        assert_eq!(who(a), Some(crate::formats::tree::Data::from("a")));
        assert_eq!(who(b), Some(crate::formats::tree::Data::from("b")));
        assert!(chart.values.contains_key("pad"));

        let broken = load_archive(&tgz(&[
            ("demo/Chart.yaml", CHART),
            (
                "demo/charts/a/Chart.yaml",
                b"apiVersion: v2\nname: a\nversion: 1.0.0\n",
            ),
            ("demo/charts/a/values.yaml", b"who: [broken\n"),
        ]))
        .unwrap_err();
        assert!(
            broken.0.starts_with(
                "error unpacking subchart a in demo: cannot load values.yaml: cannot unmarshal yaml document:"
            ),
            "{broken}"
        );

        // An archive may hold a name twice: each copy is read, as Helm reads it.
        let twice = load_archive(&tgz(&[
            ("demo/Chart.yaml", CHART),
            ("demo/values.yaml", b"who: [broken\n"),
            ("demo/values.yaml", b"who: fine\n"),
        ]))
        .unwrap_err();
        assert!(
            twice
                .0
                .starts_with("cannot load values.yaml: cannot unmarshal yaml document:"),
            "{twice}"
        );
    }

    #[test]
    fn a_broken_subchart_archive_is_named_in_the_error() {
        let e = load_archive(&tgz(&[
            ("demo/Chart.yaml", CHART),
            ("demo/charts/sub.tgz", b"not gzip at all"),
        ]))
        .unwrap_err();
        assert!(
            e.0.starts_with("error unpacking subchart sub.tgz in demo: "),
            "{e}"
        );
    }

    #[test]
    fn hostile_archives_are_refused() {
        let up = load_archive(&tgz(&[("demo/../../etc/passwd", b"x")])).unwrap_err();
        assert_eq!(up.0, "chart illegally references parent directory");
        let top = load_archive(&tgz(&[("Chart.yaml", CHART)])).unwrap_err();
        assert_eq!(
            top.0,
            "chart illegally contains content outside the base directory: \"Chart.yaml\""
        );
        let drive = load_archive(&tgz(&[("demo/c:/x", b"x")])).unwrap_err();
        assert_eq!(drive.0, "chart contains illegally named files");
        let garbage = load_archive(b"not gzip at all").unwrap_err();
        assert!(!garbage.0.is_empty());
    }

    /// A chart folder holding `entries`.
    fn folder(entries: &[(&str, &[u8])]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, data) in entries {
            let path = dir.path().join(name);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, data).unwrap();
        }
        dir
    }

    #[test]
    fn a_folder_s_values_read_first_load_as_the_archive_s() {
        let entries: &[(&str, &[u8])] = &[
            ("Chart.yaml", CHART),
            ("README.md", b"# demo\n"),
            (
                "charts/a/Chart.yaml",
                b"apiVersion: v2\nname: a\nversion: 1.0.0\n",
            ),
            ("charts/a/values.yaml", b"who: a\n"),
            ("templates/x.yaml", b"kind: X\n"),
            (
                "values.yaml",
                b"\xEF\xBB\xBF# defaults\nwho: root\nlist: [1, 2]\n",
            ),
            ("zz.txt", b"last\n"),
        ];
        let from_folder = load_dir(folder(entries).path()).unwrap();
        let archived: Vec<(String, &[u8])> = entries
            .iter()
            .map(|(name, data)| (format!("demo/{name}"), *data))
            .collect();
        let archived: Vec<(&str, &[u8])> = archived.iter().map(|(n, d)| (n.as_str(), *d)).collect();
        let from_archive = load_archive(&tgz(&archived)).unwrap();
        assert_eq!(from_folder.values, from_archive.values);
        assert_eq!(
            from_folder.values["who"],
            crate::formats::tree::Data::from("root")
        );
        let names =
            |chart: &Chart| -> Vec<String> { chart.files.iter().map(|f| f.name.clone()).collect() };
        assert_eq!(names(&from_folder), names(&from_archive));
        assert_eq!(
            from_folder.dependencies[0].values["who"],
            crate::formats::tree::Data::from("a")
        );

        // Ignored values are not read, early or late.
        let ignored = folder(&[
            ("Chart.yaml", CHART),
            (".helmignore", b"values.yaml\n"),
            ("values.yaml", b"who: root\n"),
        ]);
        let chart = load_dir(ignored.path()).unwrap();
        assert!(chart.values.is_empty(), "{:?}", chart.values);

        // Broken values fail the load as before, naming the file and line.
        let broken = folder(&[("Chart.yaml", CHART), ("values.yaml", b"a: 1\nb: [\n")]);
        let e = load_dir(broken.path()).unwrap_err();
        assert!(e.0.contains("values.yaml") && e.0.contains("line"), "{e}");
    }

    #[test]
    fn folder_links_are_followed_and_irregular_or_oversized_files_refused() {
        // In /tmp rather than $TMPDIR: a socket's path must be short.
        let dir = tempfile::Builder::new().tempdir_in("/tmp").unwrap();
        let root = dir.path();
        let entries: [(&str, &[u8]); 3] = [
            ("Chart.yaml", CHART),
            ("shared/values.yaml", b"who: linked\n"),
            ("real/templates/x.yaml", b"kind: X\n"),
        ];
        for (name, data) in entries {
            fs::create_dir_all(root.join(name).parent().unwrap()).unwrap();
            fs::write(root.join(name), data).unwrap();
        }
        std::os::unix::fs::symlink(root.join("shared/values.yaml"), root.join("values.yaml"))
            .unwrap();
        std::os::unix::fs::symlink(root.join("real/templates"), root.join("templates")).unwrap();
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        fs::File::options()
            .write(true)
            .open(root.join("Chart.yaml"))
            .and_then(|file| file.set_modified(old))
            .unwrap();
        let chart = load_dir(root).unwrap();
        assert_eq!(
            chart.values["who"],
            crate::formats::tree::Data::from("linked")
        );
        let names: Vec<&str> = chart.templates.iter().map(|t| t.name.as_str()).collect();
        assert!(names.contains(&"templates/x.yaml"), "{names:?}");
        assert_eq!(
            chart.modified,
            Some(jiff::Timestamp::from_second(1_000_000).unwrap())
        );

        // A socket is neither a file nor a folder: refused, not opened.
        let _socket = std::os::unix::net::UnixListener::bind(root.join("sock")).unwrap();
        let e = load_dir(root).unwrap_err();
        assert!(e.0.starts_with("cannot load irregular file"), "{e}");
        assert!(
            e.0.contains(&root.join("sock").display().to_string()),
            "{e}"
        );
        fs::remove_file(root.join("sock")).unwrap();

        // Nor is a FIFO, which is refused without being opened: opening it would wait for a
        // writer (the load runs on a thread of its own, so that such a wait fails the test).
        let made = std::process::Command::new("mkfifo")
            .arg(root.join("pipe"))
            .status()
            .unwrap();
        assert!(made.success());
        let (sender, receiver) = std::sync::mpsc::channel();
        let folder = root.to_path_buf();
        std::thread::spawn(move || sender.send(load_dir(&folder).map(|_| ())));
        let loaded = receiver.recv_timeout(std::time::Duration::from_secs(30));
        let e = loaded.expect("the load returns").unwrap_err();
        assert!(e.0.starts_with("cannot load irregular file"), "{e}");
        assert!(
            e.0.contains(&root.join("pipe").display().to_string()),
            "{e}"
        );
        fs::remove_file(root.join("pipe")).unwrap();

        // Too large a file is refused.
        let big = fs::File::create(root.join("big.bin")).unwrap();
        big.set_len(MAX_DECOMPRESSED_FILE_SIZE + 1).unwrap();
        let e = load_dir(root).unwrap_err();
        assert!(
            e.0.contains("\"big.bin\" is larger than the maximum file size"),
            "{e}"
        );
    }

    /// Rewrites the file at `path` in place (the same inode, so an open file sees it).
    fn rewrite(path: &Path, data: &[u8]) {
        fs::write(path, data).unwrap();
    }

    #[test]
    fn a_folder_s_crd_files_are_read_from_the_open_file_on_first_use() {
        let dir = folder(&[
            ("Chart.yaml", CHART),
            ("crds/a.yaml", b"kind: A\n"),
            (
                "charts/sub/Chart.yaml",
                b"apiVersion: v2\nname: sub\nversion: 0.1.0\n",
            ),
            ("charts/sub/crds/b.yaml", b"kind: B\n"),
            ("files/c.yaml", b"kind: C\n"),
        ]);
        let root = dir.path();
        let chart = load_dir(root).unwrap();
        rewrite(&root.join("crds/a.yaml"), b"kind: A2\n");
        rewrite(&root.join("charts/sub/crds/b.yaml"), b"kind: B2\n");
        rewrite(&root.join("files/c.yaml"), b"kind: C2\n");
        let sub = &chart.dependencies[0];
        let read = |files: &[File], name: &str| {
            let file = files.iter().find(|f| f.name == name).unwrap();
            file.data.read().unwrap().clone()
        };
        // Read after the load, so what the file holds now…
        assert_eq!(read(&chart.files, "crds/a.yaml"), &b"kind: A2\n"[..]);
        assert_eq!(read(&sub.files, "crds/b.yaml"), &b"kind: B2\n"[..]);
        // …while other files were read as the chart loaded.
        assert_eq!(read(&chart.files, "files/c.yaml"), &b"kind: C\n"[..]);

        // The open file is read, not whatever is at its path by then.
        let chart = load_dir(root).unwrap();
        fs::write(root.join("replacement"), b"kind: Other\n").unwrap();
        fs::rename(root.join("replacement"), root.join("crds/a.yaml")).unwrap();
        assert_eq!(read(&chart.files, "crds/a.yaml"), &b"kind: A2\n"[..]);
        assert_eq!(chart.deferred_read_failure(), None);
    }

    #[test]
    fn a_deferred_file_keeps_the_loaders_rules() {
        let dir = folder(&[
            ("Chart.yaml", CHART),
            ("crds/a.yaml", b"\xEF\xBB\xBFkind: A\n"),
        ]);
        let root = dir.path();
        // A byte order mark is dropped as from any other file.
        let chart = load_dir(root).unwrap();
        assert_eq!(chart.files[0].data.read().unwrap(), &b"kind: A\n"[..]);

        // Too large when the chart loads: refused then, as Helm refuses it.
        let big = root.join("crds/big.yaml");
        fs::File::create(&big)
            .and_then(|f| f.set_len(MAX_DECOMPRESSED_FILE_SIZE + 1))
            .unwrap();
        let e = load_dir(root).unwrap_err();
        assert!(
            e.0.contains("\"big.yaml\" is larger than the maximum file size"),
            "{e}"
        );
        fs::remove_file(&big).unwrap();

        // Grown too large after it loaded: the read fails, and says so each time it is asked.
        let chart = load_dir(root).unwrap();
        fs::File::options()
            .write(true)
            .open(root.join("crds/a.yaml"))
            .and_then(|f| f.set_len(MAX_DECOMPRESSED_FILE_SIZE + 1))
            .unwrap();
        let file = &chart.files[0].data;
        assert_eq!(file.read_failure(), None, "not read yet");
        let e = file.read().unwrap_err();
        assert!(
            e.0.contains("\"a.yaml\" is larger than the maximum file size"),
            "{e}"
        );
        assert_eq!(file.read().unwrap_err(), e);
        assert!(file.bytes_or_empty().is_empty());
        assert_eq!(chart.deferred_read_failure(), Some(&e));
    }

    #[test]
    fn a_folder_load_holds_a_bounded_number_of_files_open() {
        let names: Vec<String> = (0..MAX_DEFERRED_FILES + 3)
            .map(|i| format!("crds/{i:03}.yaml"))
            .collect();
        let mut entries: Vec<(&str, &[u8])> = vec![("Chart.yaml", CHART)];
        entries.extend(names.iter().map(|name| (name.as_str(), &b"old"[..])));
        let dir = folder(&entries);
        let chart = load_dir(dir.path()).unwrap();
        for name in &names {
            rewrite(&dir.path().join(name), b"new");
        }
        let new = chart
            .files
            .iter()
            .filter(|f| f.data.read().unwrap() == &b"new"[..])
            .count();
        assert_eq!(new, MAX_DEFERRED_FILES, "the rest were read as they loaded");
    }

    #[test]
    fn oversized_files_are_refused_without_reading_them_whole() {
        let big = vec![b'a'; (MAX_DECOMPRESSED_FILE_SIZE + 1) as usize];
        let e = load_archive(&tgz(&[("demo/Chart.yaml", CHART), ("demo/big", &big)])).unwrap_err();
        assert!(
            e.0.contains("is larger than the maximum file size 5242880"),
            "{e}"
        );
    }

    #[test]
    fn chart_yaml_errors_name_the_file_and_line() {
        let e = load_archive(&tgz(&[("demo/Chart.yaml", b"name: a\n  bad: [\n")])).unwrap_err();
        assert!(
            e.0.starts_with("cannot load Chart.yaml: error converting YAML to JSON: yaml: line 2"),
            "{e}"
        );
        let e = load_archive(&tgz(&[("demo/values.yaml", b"a: 1\n")])).unwrap_err();
        assert_eq!(e.0, "Chart.yaml file is missing");
    }

    #[test]
    fn paths_are_cleaned_like_go() {
        assert_eq!(clean_path("a/./b//c/../d"), "a/b/d");
        assert_eq!(clean_path("../x"), "../x");
        assert_eq!(clean_path(""), ".");
    }
}
