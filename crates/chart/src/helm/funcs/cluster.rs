//! The functions that would reach outside the render: Helm's `lookup` and Sprig's
//! `getHostByName`, with the answers `helm template` gives, where neither a cluster nor DNS
//! is consulted. An embedder with a cluster replaces `lookup` in its [`FuncMap`].

use std::fmt;
use std::sync::Arc;

use super::{FuncError, FuncMap, args};
use crate::engine::value::Value;
use crate::formats::tree::Data;

/// The signature of a cluster-backed `lookup`: (apiVersion, kind, namespace, name) to the
/// object (or list, when `name` is empty) as unstructured data, an empty map when nothing
/// is found, or an error message.
pub type LookupFn = dyn Fn(&str, &str, &str, &str) -> Result<Data, String> + Send + Sync;

/// A `lookup` answered by a cluster, which replaces the offline one (see [`install_lookup`]).
#[derive(Clone)]
pub struct Lookup(pub Arc<LookupFn>);

impl fmt::Debug for Lookup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Lookup(..)")
    }
}

/// Replaces `lookup` with one answered by `lookup`; its errors read as Go's
/// `error calling lookup: MESSAGE`.
pub fn install_lookup(funcs: &mut FuncMap, lookup: Lookup) {
    funcs.add("lookup", move |a: &[Value]| {
        args::count(a, 4)?;
        let api_version = args::string(a, 0)?;
        let kind = args::string(a, 1)?;
        let namespace = args::string(a, 2)?;
        let name = args::string(a, 3)?;
        let found = (lookup.0)(api_version, kind, namespace, name).map_err(FuncError::failed)?;
        Ok(Value::from_data(&found))
    });
}

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
