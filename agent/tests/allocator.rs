//! The agent binary allocates with jemalloc, with the settings `.cargo/config.toml` compiles in
//! (huge pages, one arena): a `template` run's speed and peak memory depend on them, and a
//! build without them would still pass every other test.

use std::process::Command;

#[test]
fn the_binary_runs_jemalloc_with_huge_pages_and_one_arena() {
    // jemalloc prints its settings at exit when asked to through its environment variable.
    let out = Command::new(env!("CARGO_BIN_EXE_landscaper-agent"))
        .arg("--version")
        .env("_RJEM_MALLOC_CONF", "stats_print:true")
        .output()
        .expect("run landscaper-agent");
    assert!(out.status.success());
    let stats = String::from_utf8_lossy(&out.stderr);
    // What was compiled in, and what jemalloc made of it; whether huge pages are used also
    // depends on the kernel, so `opt.thp` is not asserted.
    for setting in [
        "config.malloc_conf: \"background_thread:false,thp:always,metadata_thp:always,narenas:1,lg_extent_max_active_fit:30\"",
        "opt.narenas: 1\n",
        "opt.lg_extent_max_active_fit: 30\n",
    ] {
        assert!(
            stats.contains(setting),
            "{setting:?} missing from jemalloc's statistics:\n{stats}"
        );
    }
}
