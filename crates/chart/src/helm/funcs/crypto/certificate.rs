//! Sprig's certificate functions (`genCA`, `genSelfSignedCert`, `genSignedCert`, their
//! `WithKey` forms and `buildCustomCert`) and the `certificate` they return.
//!
//! A certificate whose key the function generates is made when it is first looked at, not in
//! the call. A 2048-bit RSA key is most of a render's work for a chart that calls `genCA`
//! whatever its values (bitnami's charts do, then fill their secret from given PEM text), and
//! a key nobody reads cannot be told from one never made. Everything the arguments can make
//! fail is checked in the call, and the validity period starts at the call, as in Go.

use std::cell::RefCell;
use std::net::IpAddr;
use std::rc::Rc;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SanType, SerialNumber,
};

use super::{PrivateKey, new_rsa_key, parse_key_arg, parse_private_key, pem_decode, pem_encode};
use crate::engine::report_deferred_failure;
use crate::engine::value::{Object, Value};
use crate::helm::funcs::encoding::base64_decode;
use crate::helm::funcs::strings::random_bytes;
use crate::helm::funcs::{FuncError, FuncMap, args};

/// The size of the RSA keys the certificate functions generate, as in Sprig.
const GENERATED_KEY_BITS: usize = 2048;

/// Registers the certificate functions.
pub(super) fn install(funcs: &mut FuncMap) {
    funcs.add("buildCustomCert", |a: &[Value]| {
        args::count(a, 2)?;
        build_custom_cert(args::string(a, 0)?, args::string(a, 1)?)
            .map(Certificate::made)
            .map_err(FuncError::failed)
    });
    funcs.add("genCA", |a: &[Value]| {
        args::count(a, 2)?;
        let (cn, days) = (args::string(a, 0)?, args::int(a, 1)?);
        let draft =
            Draft::new(cn, Vec::new(), &[], days, Role::Authority).map_err(FuncError::failed)?;
        Ok(Certificate::generated("genCA", draft))
    });
    funcs.add("genCAWithKey", |a: &[Value]| {
        args::count(a, 3)?;
        let (cn, days) = (args::string(a, 0)?, args::int(a, 1)?);
        let key = parse_key_arg(args::string(a, 2)?).map_err(FuncError::failed)?;
        let draft =
            Draft::new(cn, Vec::new(), &[], days, Role::Authority).map_err(FuncError::failed)?;
        Certificate::signed(draft, &key)
    });
    funcs.add("genSelfSignedCert", |a: &[Value]| {
        args::count(a, 4)?;
        let draft = LeafArgs::read(a)?.draft(None)?;
        Ok(Certificate::generated("genSelfSignedCert", draft))
    });
    funcs.add("genSelfSignedCertWithKey", |a: &[Value]| {
        args::count(a, 5)?;
        let leaf = LeafArgs::read(a)?;
        let key = parse_key_arg(args::string(a, 4)?).map_err(FuncError::failed)?;
        let draft = leaf.draft(None)?;
        Certificate::signed(draft, &key)
    });
    funcs.add("genSignedCert", |a: &[Value]| {
        args::count(a, 5)?;
        let leaf = LeafArgs::read(a)?;
        let draft = leaf.draft(Some(certificate_arg(a, 4)?))?;
        // An authority signing would refuse is refused in the call.
        draft.issuer().map_err(FuncError::failed)?;
        Ok(Certificate::generated("genSignedCert", draft))
    });
    funcs.add("genSignedCertWithKey", |a: &[Value]| {
        args::count(a, 6)?;
        let leaf = LeafArgs::read(a)?;
        let ca = certificate_arg(a, 4)?;
        let key = parse_key_arg(args::string(a, 5)?).map_err(FuncError::failed)?;
        let draft = leaf.draft(Some(ca))?;
        Certificate::signed(draft, &key)
    });
}

/// Sprig's `certificate`: a PEM certificate and its PEM key, as `.Cert` and `.Key`.
///
/// Copies of the value share one certificate, so every reader sees the same key.
pub struct Certificate(RefCell<State>);

/// A certificate's PEM texts.
#[derive(Default)]
struct Pem {
    cert: String,
    key: String,
}

enum State {
    /// Not looked at yet: the checked draft that a new RSA key of `key_bits` will sign, and
    /// the function that returned it, for errors.
    Pending {
        function: &'static str,
        draft: Box<Draft>,
        key_bits: usize,
    },
    /// Made, or the error (naming the function) that making it gave. Once the call's checks
    /// passed, only the operating system's randomness or a fault of this program can make it
    /// fail.
    Settled(Result<Rc<Pem>, String>),
}

impl Certificate {
    fn made(pem: Pem) -> Value {
        Value::object(Certificate(RefCell::new(State::Settled(Ok(Rc::new(pem))))))
    }

    /// A certificate for `draft` whose new key of Sprig's size is made on the first read.
    fn generated(function: &'static str, draft: Draft) -> Value {
        Certificate::pending(function, draft, GENERATED_KEY_BITS)
    }

    /// The certificate `draft` makes with the given `key`, made now.
    fn signed(draft: Draft, key: &PrivateKey) -> Result<Value, FuncError> {
        draft
            .sign(key)
            .map(Certificate::made)
            .map_err(FuncError::failed)
    }

    fn pending(function: &'static str, draft: Draft, key_bits: usize) -> Value {
        Value::object(Certificate(RefCell::new(State::Pending {
            function,
            draft: Box::new(draft),
            key_bits,
        })))
    }

    /// The certificate, made now if nobody has looked at it before.
    fn pem(&self) -> Result<Rc<Pem>, String> {
        let mut state = self.0.borrow_mut();
        let settled = match std::mem::replace(&mut *state, State::Settled(Err(String::new()))) {
            State::Pending {
                function,
                draft,
                key_bits,
            } => new_rsa_key(key_bits)
                .and_then(|key| draft.sign(&key))
                .map(Rc::new)
                .map_err(|e| format!("error calling {function}: {e}")),
            State::Settled(settled) => settled,
        };
        *state = State::Settled(settled.clone());
        settled
    }

    /// The certificate for readers that cannot fail (`.Cert`, printing, `toJson`): should
    /// making it fail, the template run fails when it ends, and the texts read empty until
    /// then.
    fn observed(&self) -> Rc<Pem> {
        self.pem().unwrap_or_else(|message| {
            report_deferred_failure(message);
            Rc::default()
        })
    }
}

impl Object for Certificate {
    fn type_name(&self) -> String {
        "sprig.certificate".to_string()
    }

    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "Cert" => Some(Value::from(self.observed().cert.as_str())),
            "Key" => Some(Value::from(self.observed().key.as_str())),
            _ => None,
        }
    }

    fn format(&self) -> String {
        let pem = self.observed();
        format!("{{{} {}}}", pem.cert, pem.key)
    }

    /// `%+v`: the fields with their names.
    fn format_verbose(&self) -> String {
        let pem = self.observed();
        format!("{{Cert:{} Key:{}}}", pem.cert, pem.key)
    }

    /// Go's `json.Marshal` of the struct: `{"Cert":…,"Key":…}`.
    fn to_data(&self) -> Option<crate::formats::tree::Data> {
        let pem = self.observed();
        let mut map = crate::formats::tree::Map::default();
        map.insert(
            "Cert".into(),
            crate::formats::tree::Data::String(pem.cert.clone()),
        );
        map.insert(
            "Key".into(),
            crate::formats::tree::Data::String(pem.key.clone()),
        );
        Some(crate::formats::tree::Data::Map(map))
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

/// A `certificate` argument (Go's conversion of the argument: the certificate is not made
/// yet).
fn certificate_arg(a: &[Value], index: usize) -> Result<&Certificate, FuncError> {
    match a.get(index) {
        Some(Value::Object(o)) => o.as_any().and_then(|any| any.downcast_ref::<Certificate>()),
        _ => None,
    }
    .ok_or_else(|| FuncError::ArgType {
        index,
        expected: "sprig.certificate".to_string(),
    })
}

/// Sprig's `buildCustomCertificate`: base64 PEMs checked and wrapped.
fn build_custom_cert(b64_cert: &str, b64_key: &str) -> Result<Pem, String> {
    let cert = base64_decode(b64_cert).map_err(|_| "unable to decode base64 certificate")?;
    let key = base64_decode(b64_key).map_err(|_| "unable to decode base64 private key")?;
    let cert = String::from_utf8_lossy(&cert).into_owned();
    let key = String::from_utf8_lossy(&key).into_owned();
    let (_, der) = pem_decode(&cert).ok_or("unable to decode certificate")?;
    x509_parser::parse_x509_certificate(&der)
        .map_err(|e| format!("error parsing certificate: decodedCert.Bytes: {e}"))?;
    parse_private_key(&key).map_err(|e| format!("error parsing private key: {e}"))?;
    Ok(Pem { cert, key })
}

/// The arguments a `genSelfSignedCert` or `genSignedCert` leaf starts with, converted in
/// order as Go converts a function's arguments before calling it.
struct LeafArgs<'a> {
    cn: &'a str,
    ips: &'a [Value],
    dns: &'a [Value],
    days: i64,
}

impl<'a> LeafArgs<'a> {
    fn read(a: &'a [Value]) -> Result<Self, FuncError> {
        Ok(LeafArgs {
            cn: args::string(a, 0)?,
            ips: args::list(a, 1)?,
            dns: args::list(a, 2)?,
            days: args::int(a, 3)?,
        })
    }

    /// The leaf's draft, signed by `ca` if given, with Sprig's checks in Go's order: the
    /// authority, then the lists.
    fn draft(&self, ca: Option<&Certificate>) -> Result<Draft, FuncError> {
        let role = match ca {
            Some(ca) => {
                let pem = ca.pem().map_err(FuncError::failed)?;
                Role::SignedBy(Box::new(authority(&pem).map_err(FuncError::failed)?))
            }
            None => Role::SelfSigned,
        };
        let ips = self
            .ips
            .iter()
            .map(|ip| match ip {
                Value::String(s) => s
                    .parse::<IpAddr>()
                    .map_err(|_| format!("error parsing ip: {s}")),
                other => Err(format!(
                    "error parsing ip: {} is not a string",
                    other.to_go_string()
                )),
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(FuncError::failed)?;
        let dns = self
            .dns
            .iter()
            .map(|name| match name {
                Value::String(s) => Ok(s.to_string()),
                other => Err(format!(
                    "error processing alternate dns name: {} is not a string",
                    other.to_go_string()
                )),
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(FuncError::failed)?;
        Draft::new(self.cn, ips, &dns, self.days, role).map_err(FuncError::failed)
    }
}

/// A signing authority read from a `certificate`: its DER and its key.
struct Authority {
    der: Vec<u8>,
    key: PrivateKey,
}

/// The checks Sprig makes of an authority before it reads the lists; whether the key can
/// sign shows only when signing (`x509.CreateCertificate`), after them.
fn authority(ca: &Pem) -> Result<Authority, String> {
    let (_, der) = pem_decode(&ca.cert).ok_or("unable to decode certificate")?;
    x509_parser::parse_x509_certificate(&der)
        .map_err(|e| format!("error parsing certificate: decodedSignerCert.Bytes: {e}"))?;
    let key = parse_private_key(&ca.key).map_err(|e| format!("error parsing private key: {e}"))?;
    Ok(Authority { der, key })
}

fn creating(e: String) -> String {
    format!("error creating certificate: {e}")
}

/// Which certificate Sprig's template makes.
enum Role {
    /// `genCA`: self-signed, `CA:TRUE`, may sign certificates.
    Authority,
    /// `genSelfSignedCert`: self-signed, `CA:FALSE`.
    SelfSigned,
    /// `genSignedCert`: signed by the authority, `CA:FALSE`.
    SignedBy(Box<Authority>),
}

/// A certificate checked and ready to be signed but for its key: Go's
/// `getBaseCertTemplate` (the common name as subject, DNS and IP alternative names, valid from
/// now for `days` days, key encipherment and digital signature, and certificate signing for an
/// authority, server and client authentication, basic constraints) and its role.
struct Draft {
    params: CertificateParams,
    role: Role,
}

impl Draft {
    fn new(
        cn: &str,
        ips: Vec<IpAddr>,
        dns: &[String],
        days: i64,
        role: Role,
    ) -> Result<Draft, String> {
        let mut params = CertificateParams::default();
        let mut name = DistinguishedName::new();
        name.push(DnType::CommonName, cn);
        params.distinguished_name = name;
        for name in dns {
            let ia5 = name.as_str().try_into().map_err(|_| {
                creating(format!(
                    "x509: {} cannot be encoded as an IA5String",
                    crate::engine::value::format::quote(name)
                ))
            })?;
            params.subject_alt_names.push(SanType::DnsName(ia5));
        }
        params
            .subject_alt_names
            .extend(ips.into_iter().map(SanType::IpAddress));
        let now = time::OffsetDateTime::now_utc();
        params.not_before = now;
        // Go's `time.Hour * 24 * time.Duration(days)`: nanoseconds in an int64 that wraps, so
        // the period is always within 292 years of now, however many days are asked for, and
        // the sum fails only for a clock within 292 years of the year 9999.
        let period = time::Duration::nanoseconds(days.wrapping_mul(86_400_000_000_000));
        params.not_after = now
            .checked_add(period)
            .ok_or_else(|| creating("x509: validity period out of range".to_string()))?;
        params.key_usages = vec![
            KeyUsagePurpose::KeyEncipherment,
            KeyUsagePurpose::DigitalSignature,
        ];
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        params.is_ca = IsCa::ExplicitNoCa;
        match &role {
            Role::Authority => {
                params.key_usages.push(KeyUsagePurpose::KeyCertSign);
                params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            }
            Role::SignedBy(_) => params.use_authority_key_identifier_extension = true,
            Role::SelfSigned => {}
        }
        Ok(Draft { params, role })
    }

    /// The issuer of a certificate signed by an authority; `None` for a self-signed one.
    fn issuer(&self) -> Result<Option<Issuer<'static, KeyPair>>, String> {
        let Role::SignedBy(authority) = &self.role else {
            return Ok(None);
        };
        let key = authority.key.key_pair().map_err(creating)?;
        Issuer::from_ca_cert_der(&authority.der.as_slice().into(), key)
            .map(Some)
            .map_err(|e| creating(e.to_string()))
    }

    /// `x509.CreateCertificate` with a random 128-bit serial: the certificate signed with
    /// `key` (or by its issuer), and the key, as PEM.
    fn sign(mut self, key: &PrivateKey) -> Result<Pem, String> {
        let key_pair = key.key_pair().map_err(creating)?;
        let mut serial = [0u8; 16];
        random_bytes(&mut serial).map_err(|e| e.to_string())?;
        let first = serial.iter().position(|&b| b != 0).unwrap_or(15);
        self.params.serial_number = Some(SerialNumber::from_slice(&serial[first..]));
        let cert = match self.issuer()? {
            Some(issuer) => self.params.signed_by(&key_pair, &issuer),
            None => self.params.self_signed(&key_pair),
        }
        .map_err(|e| creating(e.to_string()))?;
        Ok(Pem {
            cert: pem_encode("CERTIFICATE", cert.der()),
            key: key
                .to_pem()
                .map_err(|e| format!("error pem-encoding key: {e}"))?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;

    #[test]
    fn generated_keys_wait_until_their_certificate_is_looked_at() {
        let mut engine = Engine::new(crate::helm::funcs::helm_funcs());
        engine.funcs_mut().add("isPending", |a: &[Value]| {
            let pending = match a.first() {
                Some(Value::Object(o)) => o
                    .as_any()
                    .and_then(|any| any.downcast_ref::<Certificate>())
                    .is_some_and(|c| matches!(*c.0.borrow(), State::Pending { .. })),
                _ => false,
            };
            Ok(Value::from(pending))
        });
        let template = r#"{{ $ca := genCA "ca" 1 }}{{ isPending $ca }}
{{- $self := genSelfSignedCert "self" nil nil 1 }} {{ isPending $self }}
{{- $leaf := genSignedCert "leaf" nil nil 1 $ca }} {{ isPending $leaf }} {{ isPending $ca }}
{{- $key := genPrivateKey "ecdsa" }} {{ isPending (genCAWithKey "k" 1 $key) }}
{{- $a := $self.Cert }} {{ isPending $self }} {{ eq $a $self.Cert }}"#;
        engine.add_template("t", template).expect("parses");
        let got = engine.render("t", &Value::empty_map()).expect("renders");
        assert_eq!(got, "true true true false false false true");
    }

    /// Renders `template` with `weakCA` and `weakAuthority`: a made certificate that x509
    /// parsing accepts but whose 1024-bit RSA key rcgen will not sign with.
    fn render_with_weak_authorities(template: &str) -> Result<String, String> {
        let mut engine = Engine::new(crate::helm::funcs::helm_funcs());
        engine.funcs_mut().add("weakCA", |_: &[Value]| {
            let draft = Draft::new("weak", Vec::new(), &[], 1, Role::Authority)
                .map_err(FuncError::failed)?;
            Ok(Certificate::pending("weakCA", draft, 1024))
        });
        engine.funcs_mut().add("weakAuthority", |_: &[Value]| {
            let p256 = PrivateKey::P256(p256::SecretKey::random(&mut rand_core::OsRng));
            let signed = Draft::new("weak", Vec::new(), &[], 1, Role::Authority)
                .and_then(|draft| draft.sign(&p256));
            let key = new_rsa_key(1024).and_then(|key| key.to_pem());
            match (signed, key) {
                (Ok(signed), Ok(key)) => Ok(Certificate::made(Pem {
                    cert: signed.cert,
                    key,
                })),
                (Err(e), _) | (_, Err(e)) => Err(FuncError::failed(e)),
            }
        });
        engine
            .add_template("t", template)
            .map_err(|e| e.to_string())?;
        engine
            .render("t", &Value::empty_map())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn authorities_and_keys_are_checked_in_go_s_order() {
        for (template, want) in [
            // Every argument is converted before the authority is made.
            (
                r#"{{ genSignedCert 1 nil nil 1 weakCA }}"#,
                "expected string; found 1",
            ),
            // The given key is parsed before the authority is made.
            (
                r#"{{ genSignedCertWithKey "x" nil nil 1 weakCA "nope" }}"#,
                "error calling genSignedCertWithKey: parsing private key: no PEM data in input",
            ),
            // The lists are read before signing finds that the authority's key cannot sign.
            (
                r#"{{ genSignedCert "x" (list 1) nil 1 weakAuthority }}"#,
                "error calling genSignedCert: error parsing ip: 1 is not a string",
            ),
            // An authority that cannot sign fails the call, not a later read.
            (
                r#"{{ $c := genSignedCert "x" nil nil 1 weakAuthority }}ok"#,
                "at <genSignedCert \"x\" nil nil 1 weakAuthority>: error calling genSignedCert: error creating certificate:",
            ),
        ] {
            let got = render_with_weak_authorities(template).expect_err(template);
            assert!(got.contains(want), "{template}: {got}");
        }
    }

    #[test]
    fn a_certificate_nobody_looks_at_is_never_made() {
        let got = render_with_weak_authorities(
            r#"{{ $ca := weakCA }}{{ if $ca }}{{ typeOf $ca }}{{ end }}"#,
        );
        assert_eq!(got.as_deref(), Ok("sprig.certificate"));
    }

    #[test]
    fn making_a_certificate_fails_the_render_however_it_is_read() {
        for template in [
            "{{ (weakCA).Cert }}",
            "{{ weakCA }}",
            "{{ weakCA | toJson }}",
            "{{ dict \"ca\" weakCA | toYaml }}",
            "{{ include \"d\" weakCA }}{{ define \"d\" }}{{ .Key }}{{ end }}",
        ] {
            let error = render_with_weak_authorities(template).expect_err(template);
            assert!(
                error.starts_with("template: t: error calling weakCA: error creating certificate:"),
                "{template}: {error}"
            );
        }
        // The failure came first, so it is the error, not what followed from the empty text.
        let error = render_with_weak_authorities(
            r#"{{ $c := weakCA }}{{ required "need a cert" $c.Cert }}"#,
        )
        .expect_err("required after a failed read");
        assert!(error.contains("error calling weakCA: "), "{error}");
        let error = render_with_weak_authorities(r#"{{ genSignedCert "x" nil nil 1 weakCA }}"#)
            .expect_err("signed by a failed authority");
        assert!(
            error.contains("error calling genSignedCert: error calling weakCA: "),
            "{error}"
        );
    }
}
