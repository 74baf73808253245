//! Who a request comes from: users and their groups, and the static bearer tokens of the
//! admin and test users. [`crate::authn`] decides which user a request is.

use crate::ids;
use std::collections::{BTreeMap, HashMap};
use std::sync::RwLock;

/// An authenticated identity, as kube-apiserver's `user.Info`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserInfo {
    /// User name (`system:serviceaccount:<ns>:<name>` for ServiceAccounts).
    pub name: String,
    /// User uid (ServiceAccounts: the SA's uid).
    pub uid: String,
    /// Groups, `system:authenticated` included.
    pub groups: Vec<String>,
    /// Extra attributes.
    pub extra: BTreeMap<String, Vec<String>>,
}

/// The superuser group: allowed everything.
pub const MASTERS: &str = "system:masters";
/// Every authenticated user is in this group.
pub const AUTHENTICATED: &str = "system:authenticated";

impl UserInfo {
    /// A user with a name and groups (`system:authenticated` is added).
    pub fn new(name: &str, groups: &[&str]) -> Self {
        let mut g: Vec<String> = groups.iter().map(|s| s.to_string()).collect();
        if !g.iter().any(|x| x == AUTHENTICATED) {
            g.push(AUTHENTICATED.into());
        }
        Self {
            name: name.into(),
            uid: String::new(),
            groups: g,
            extra: BTreeMap::new(),
        }
    }

    /// The unauthenticated user.
    pub fn anonymous() -> Self {
        Self {
            name: "system:anonymous".into(),
            uid: String::new(),
            groups: vec!["system:unauthenticated".into()],
            extra: BTreeMap::new(),
        }
    }

    /// Whether this user may do anything.
    pub fn is_superuser(&self) -> bool {
        self.groups.iter().any(|g| g == MASTERS)
    }
}

/// Static bearer tokens of one cluster (the admin's and any a test adds).
#[derive(Default)]
pub struct StaticTokens {
    tokens: RwLock<HashMap<String, UserInfo>>,
}

impl StaticTokens {
    /// Registers a fresh random token for `user`; returns the token.
    pub fn issue(&self, user: UserInfo) -> String {
        let mut b = [0u8; 24];
        ids::random_bytes(&mut b);
        let token: String = b.iter().map(|x| format!("{x:02x}")).collect();
        self.tokens
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(token.clone(), user);
        token
    }

    /// The user of a static token.
    pub fn lookup(&self, token: &str) -> Option<UserInfo> {
        self.tokens
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(token)
            .cloned()
    }
}

impl UserInfo {
    /// The identity as the RBAC authorizer sees it.
    pub fn to_rbac(&self) -> crate::rbac::UserInfo {
        crate::rbac::UserInfo {
            name: self.name.clone(),
            groups: self.groups.clone(),
        }
    }

    /// `userInfo` as SelfSubjectReview and TokenReview write it.
    pub fn to_json(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        m.insert("username".into(), self.name.clone().into());
        if !self.uid.is_empty() {
            m.insert("uid".into(), self.uid.clone().into());
        }
        m.insert("groups".into(), serde_json::json!(self.groups));
        if !self.extra.is_empty() {
            m.insert("extra".into(), serde_json::json!(self.extra));
        }
        serde_json::Value::Object(m)
    }
}
