//! Key and certificate generation times, as a template calls them: `genCA` (a 2048-bit RSA key
//! and a self-signed certificate, what bitnami nginx renders twice), `genPrivateKey "rsa"` (4096
//! bits) and the elliptic-curve kinds. RSA key generation takes a random time (primes are found
//! by a random search), so each line gives the distribution over many runs: mean, median,
//! 90th percentile and maximum wall time, and the mean CPU time of the process per run (which
//! counts both prime-search threads).
//!
//! Run with `cargo bench -p landscaper-chart --bench keys`; `KEYS=N` sets the number of 2048-bit
//! runs (default 200; the 4096-bit line uses a fifth as many). The machine may be shared: the
//! load average before and after is printed beside the figures, and the CPU time per run is
//! the figure that load disturbs least.

use std::hint::black_box;
use std::time::{Duration, Instant};

use landscaper_chart::engine::Engine;
use landscaper_chart::value::Value;

/// CPU time (user + system) of this process so far, from `/proc/self/stat` in clock ticks of
/// 10 ms: coarse, so only a mean over many runs is reported.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// The 1-, 5- and 15-minute load averages, from `/proc/loadavg`.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "unknown".to_string())
}

fn report(name: &str, template: &str, runs: usize) {
    let mut engine = Engine::new();
    if let Err(e) = engine.add_template("t", template) {
        println!("{name}: {e}");
        return;
    }
    let cpu_before = cpu_time();
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        if let Err(e) = black_box(engine.render_helm("t", &Value::empty_map())) {
            println!("{name}: {e}");
            return;
        }
        times.push(start.elapsed());
    }
    let cpu = match (cpu_before, cpu_time()) {
        (Some(before), Some(after)) => format!("{:.2?}", (after - before) / runs as u32),
        _ => "unknown".to_string(),
    };
    times.sort();
    let mean = times.iter().sum::<Duration>() / runs as u32;
    let at = |fraction: f64| times[((runs - 1) as f64 * fraction).round() as usize];
    println!(
        "{name} ({runs} runs): mean {mean:.2?}, median {:.2?}, p90 {:.2?}, max {:.2?}; CPU per run {cpu}",
        at(0.5),
        at(0.9),
        at(1.0),
    );
}

fn main() {
    let runs = std::env::var("KEYS")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(200);
    println!("load average before: {}", load_average());
    report("genCA (RSA 2048)", r#"{{ genCA "ca" 365 }}"#, runs);
    report(
        "genPrivateKey rsa (4096)",
        r#"{{ genPrivateKey "rsa" }}"#,
        runs.div_ceil(5),
    );
    report(
        "genPrivateKey ecdsa (P-256)",
        r#"{{ genPrivateKey "ecdsa" }}"#,
        runs,
    );
    report(
        "genPrivateKey ed25519",
        r#"{{ genPrivateKey "ed25519" }}"#,
        runs,
    );
    println!("load average after: {}", load_average());
}
