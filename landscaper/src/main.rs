//! The `landscaper` binary.

fn main() {}
