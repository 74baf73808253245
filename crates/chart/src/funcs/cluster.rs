//! The functions that would reach outside the render: Helm's `lookup` and Sprig's
//! `getHostByName`, with the answers `helm template` gives, where neither a cluster nor DNS
//! is consulted. An embedder with a cluster replaces `lookup` in its [`FuncMap`].

use super::{FuncMap, args};
use crate::value::Value;

/// Registers `lookup` and `getHostByName`.
pub fn install(funcs: &mut FuncMap) {
    // Without a cluster connection Helm's lookup finds nothing: an empty map.
    funcs.add("lookup", |a: &[Value]| {
        args::count(a, 4)?;
        for i in 0..4 {
            args::string(a, i)?;
        }
        Ok(Value::empty_map())
    });
    // Helm disables DNS lookups unless `--enable-dns` is given; the name then resolves to "".
    funcs.add("getHostByName", |a: &[Value]| {
        args::count(a, 1)?;
        args::string(a, 0)?;
        Ok(Value::from(""))
    });
}
