//! Parse and render timings of the template engine on chart-like templates (helpers included
//! from a partial, ranges over values, conditionals, string functions), and the parsing on one
//! core of a real chart's templates (kube-prometheus-stack's, from the conformance data).
//!
//! Run with `cargo bench -p landscaper-chart --bench engine`; prints one line per case.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use landscaper_chart::engine::Engine;
use landscaper_chart::engine::value::{Map, Value};
use landscaper_chart::helm::chart::{Chart, load_dir};

const HELPERS: &str = r#"
{{- define "app.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- define "app.fullname" -}}
{{- printf "%s-%s" .Release.Name (include "app.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- define "app.labels" -}}
app.kubernetes.io/name: {{ include "app.name" . | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
{{- end -}}
"#;

const DEPLOYMENT: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "app.fullname" . }}
  labels:
    {{- include "app.labels" . | nindent 4 }}
spec:
  replicas: {{ .Values.replicas }}
  template:
    spec:
      containers:
        - name: {{ .Chart.Name }}
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
          env:
          {{- range $name, $value := .Values.env }}
            - name: {{ $name | upper | quote }}
              value: {{ $value | quote }}
          {{- end }}
          ports:
          {{- range $i, $port := .Values.ports }}
            - containerPort: {{ $port }}
              name: {{ printf "port-%d" $i }}
          {{- end }}
          {{- if .Values.resources }}
          resources: {{ .Values.resources }}
          {{- else }}
          resources: {}
          {{- end }}
"#;

fn context() -> Value {
    let env = Map::new();
    for i in 0..200 {
        env.insert(
            format!("var_{i:03}"),
            Value::from(format!("value number {i}")),
        );
    }
    let image = Map::new();
    image.insert("repository", Value::from("registry.example/app"));
    image.insert("tag", Value::from("1.2.3"));
    let values = Map::new();
    values.insert("replicas", Value::Float(3.0));
    values.insert("image", Value::Map(image));
    values.insert("env", Value::Map(env));
    values.insert(
        "ports",
        Value::list(
            (0..20)
                .map(|p| Value::Float(8000.0 + f64::from(p)))
                .collect(),
        ),
    );
    let chart = Map::new();
    chart.insert("Name", Value::from("app"));
    let release = Map::new();
    release.insert("Name", Value::from("bench"));
    let top = Map::new();
    top.insert("Values", Value::Map(values));
    top.insert("Chart", Value::Map(chart));
    top.insert("Release", Value::Map(release));
    Value::Map(top)
}

fn time(label: &str, iterations: u32, mut f: impl FnMut()) {
    f();
    let start = Instant::now();
    for _ in 0..iterations {
        f();
    }
    let per = start.elapsed() / iterations;
    println!("{label:<32} {:>10.1} µs/iter", per.as_secs_f64() * 1e6);
}

fn engine() -> Engine {
    let mut engine = Engine::new(landscaper_chart::helm::funcs::helm_funcs());
    engine
        .add_template("app/templates/_helpers.tpl", HELPERS)
        .unwrap_or_else(|e| panic!("{e}"));
    engine
        .add_template("app/templates/deployment.yaml", DEPLOYMENT)
        .unwrap_or_else(|e| panic!("{e}"));
    engine
}

/// The template files of `chart` and its subcharts, named from the chart folder on, as text.
fn template_texts(chart: &Chart, prefix: &str, out: &mut Vec<(String, String)>) {
    for file in &chart.templates {
        let text = String::from_utf8_lossy(file.data.bytes_or_empty()).into_owned();
        out.push((format!("{prefix}{}", file.name), text));
    }
    for sub in &chart.dependencies {
        template_texts(sub, &format!("{prefix}charts/{}/", sub.name()), out);
    }
}

/// Parses kube-prometheus-stack's templates into one engine, file by file on this thread (as
/// the helper that parses a chart's templates while it loads), when the conformance data is
/// beside the repository.
fn parse_real_chart() {
    let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/charts/kube-prometheus-stack/chart");
    let mut files = Vec::new();
    match load_dir(&folder) {
        // The chart is dropped before the timing, which stops its loader's parsing thread.
        Ok(chart) => template_texts(&chart, "", &mut files),
        Err(e) => {
            println!("kube-prometheus-stack templates: skipped ({e})");
            return;
        }
    }
    let bytes: usize = files.iter().map(|(_, text)| text.len()).sum();
    let label = format!("parse {} chart files", files.len());
    let iterations = 50;
    let start = Instant::now();
    for _ in 0..iterations {
        let mut engine = Engine::new(landscaper_chart::helm::funcs::helm_funcs());
        for (name, text) in &files {
            engine
                .add_template(name, text)
                .unwrap_or_else(|e| panic!("{e}"));
        }
        black_box(engine);
    }
    let per = start.elapsed() / iterations;
    println!(
        "{label:<32} {:>10.1} µs/iter ({bytes} bytes, {:.0} MB/s)",
        per.as_secs_f64() * 1e6,
        bytes as f64 / per.as_secs_f64() / 1e6
    );
}

fn main() {
    parse_real_chart();
    let dot = context();
    time("parse helpers + deployment", 2_000, || {
        black_box(engine());
    });
    let engine = engine();
    let mut bytes = 0;
    time("render deployment (200 env)", 2_000, || {
        let out = engine.render_helm("app/templates/deployment.yaml", &dot);
        bytes = out.map(|s| s.len()).unwrap_or(0);
        black_box(bytes);
    });
    println!("{:<32} {bytes:>10} bytes", "rendered size");
    assert!(bytes > 0, "the deployment must render");
}
