//! Type knowledge of the built-in kinds: which lists merge (and by which key), mirroring the
//! `patchStrategy`/`patchMergeKey` tags of the Go types, and which nested structs are plain
//! values (always present in a typed object, so never "added" for field ownership).

/// How a list field is patched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListStrategy {
    /// The patch's list replaces the live one.
    Replace,
    /// Items merge: maps by the merge key, scalars as a set.
    Merge(Option<&'static str>),
}

/// One field of a struct type.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The JSON name.
    pub name: &'static str,
    /// How the field merges when it is a list.
    pub list: ListStrategy,
    /// The type of the value (or of list items).
    pub ty: Ty,
    /// A non-pointer struct, or a list without `omitempty`, in the Go type: a typed object
    /// has it (maybe empty) whenever it has the parent.
    pub always_present: bool,
}

/// A type as far as patching needs to know it.
#[derive(Debug, Clone, Copy)]
pub enum Ty {
    /// A struct with known fields; others behave like `Opaque`.
    Struct(&'static [Field]),
    /// Nothing below has patch metadata: maps merge, lists replace.
    Opaque,
}

impl Ty {
    /// The metadata of a field of this type.
    pub fn field(self, name: &str) -> (ListStrategy, Ty) {
        self.lookup(name)
            .map_or((ListStrategy::Replace, Ty::Opaque), |f| (f.list, f.ty))
    }

    /// Whether a typed object of this type always has the field: a plain struct, or a list
    /// without `omitempty`.
    pub fn is_always_present(self, name: &str) -> bool {
        self.lookup(name).is_some_and(|f| f.always_present)
    }

    fn lookup(self, name: &str) -> Option<&'static Field> {
        match self {
            Ty::Struct(fields) => fields.iter().find(|f| f.name == name),
            Ty::Opaque => None,
        }
    }
}

const fn merge(name: &'static str, key: &'static str, ty: Ty) -> Field {
    Field {
        name,
        list: ListStrategy::Merge(Some(key)),
        ty,
        always_present: false,
    }
}

const fn set(name: &'static str) -> Field {
    Field {
        name,
        list: ListStrategy::Merge(None),
        ty: Ty::Opaque,
        always_present: false,
    }
}

/// A merged list without `omitempty`.
const fn merge_present(name: &'static str, key: &'static str, ty: Ty) -> Field {
    Field {
        always_present: true,
        ..merge(name, key, ty)
    }
}

/// A nested non-pointer struct.
const fn nested(name: &'static str, ty: Ty) -> Field {
    Field {
        name,
        list: ListStrategy::Replace,
        ty,
        always_present: true,
    }
}

const OPAQUE: Ty = Ty::Opaque;

const OBJECT_META: Ty = Ty::Struct(&[set("finalizers"), merge("ownerReferences", "uid", OPAQUE)]);

const CONTAINER: Ty = Ty::Struct(&[
    merge("ports", "containerPort", OPAQUE),
    merge("env", "name", OPAQUE),
    merge("volumeMounts", "mountPath", OPAQUE),
    merge("volumeDevices", "devicePath", OPAQUE),
]);

const POD_SPEC: Ty = Ty::Struct(&[
    merge("volumes", "name", OPAQUE),
    merge("initContainers", "name", CONTAINER),
    merge_present("containers", "name", CONTAINER),
    merge("ephemeralContainers", "name", CONTAINER),
    merge("imagePullSecrets", "name", OPAQUE),
    merge("hostAliases", "ip", OPAQUE),
    merge("topologySpreadConstraints", "topologyKey", OPAQUE),
    merge("resourceClaims", "name", OPAQUE),
    merge("schedulingGates", "name", OPAQUE),
]);

const CONDITIONS: Field = merge("conditions", "type", OPAQUE);

const POD_STATUS: Ty = Ty::Struct(&[
    CONDITIONS,
    merge("podIPs", "ip", OPAQUE),
    merge("hostIPs", "ip", OPAQUE),
    merge("resourceClaimStatuses", "name", OPAQUE),
]);

const POD_TEMPLATE: Ty = Ty::Struct(&[nested("metadata", OBJECT_META), nested("spec", POD_SPEC)]);

const WORKLOAD_SPEC: Ty = Ty::Struct(&[
    nested("template", POD_TEMPLATE),
    nested("updateStrategy", OPAQUE),
]);

const CONDITIONS_STATUS: Ty = Ty::Struct(&[CONDITIONS]);

const METADATA_ONLY: Ty = Ty::Struct(&[nested("metadata", OBJECT_META)]);

const POD: Ty = Ty::Struct(&[
    nested("metadata", OBJECT_META),
    nested("spec", POD_SPEC),
    nested("status", POD_STATUS),
]);

const WORKLOAD: Ty = Ty::Struct(&[
    nested("metadata", OBJECT_META),
    nested("spec", WORKLOAD_SPEC),
    nested("status", CONDITIONS_STATUS),
]);

const DEPLOYMENT: Ty = Ty::Struct(&[
    nested("metadata", OBJECT_META),
    nested(
        "spec",
        Ty::Struct(&[nested("template", POD_TEMPLATE), nested("strategy", OPAQUE)]),
    ),
    nested("status", CONDITIONS_STATUS),
]);

const SERVICE: Ty = Ty::Struct(&[
    nested("metadata", OBJECT_META),
    nested("spec", Ty::Struct(&[merge("ports", "port", OPAQUE)])),
    nested("status", CONDITIONS_STATUS),
]);

const NAMESPACE: Ty = Ty::Struct(&[
    nested("metadata", OBJECT_META),
    nested("status", CONDITIONS_STATUS),
]);

const EVENT: Ty = Ty::Struct(&[
    nested("metadata", OBJECT_META),
    nested("involvedObject", OPAQUE),
    nested("source", OPAQUE),
]);

const EVENT_V1: Ty = Ty::Struct(&[
    nested("metadata", OBJECT_META),
    nested("regarding", OPAQUE),
    nested("deprecatedSource", OPAQUE),
]);

const LEASE: Ty = Ty::Struct(&[nested("metadata", OBJECT_META), nested("spec", OPAQUE)]);

const SERVICE_ACCOUNT: Ty = Ty::Struct(&[
    nested("metadata", OBJECT_META),
    merge("secrets", "name", OPAQUE),
]);

/// The patch schema of a built-in kind; `None` for kinds (custom resources) that refuse
/// strategic merge patch.
pub fn for_kind(group: &str, kind: &str) -> Option<Ty> {
    Some(match (group, kind) {
        ("", "Pod") => POD,
        ("apps", "Deployment") => DEPLOYMENT,
        ("apps", "StatefulSet" | "DaemonSet" | "ReplicaSet") | ("batch", "Job") => WORKLOAD,
        ("", "Service") => SERVICE,
        ("", "Namespace") => NAMESPACE,
        ("", "ServiceAccount") => SERVICE_ACCOUNT,
        ("", "Event") => EVENT,
        ("events.k8s.io", "Event") => EVENT_V1,
        ("coordination.k8s.io", "Lease") => LEASE,
        ("", "ConfigMap" | "Secret")
        | (
            "rbac.authorization.k8s.io",
            "Role" | "RoleBinding" | "ClusterRole" | "ClusterRoleBinding",
        )
        | ("apiextensions.k8s.io", "CustomResourceDefinition")
        | ("autoscaling", "Scale") => METADATA_ONLY,
        _ => return None,
    })
}
