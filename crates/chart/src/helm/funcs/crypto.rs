//! Sprig's cryptographic functions: keys and certificates (`genPrivateKey`, `genCA`,
//! `genSelfSignedCert`, `genSignedCert` and their `WithKey` forms, `buildCustomCert`), Master
//! Password's `derivePassword`, Sprig's AES-CBC scheme (`encryptAES`/`decryptAES`), `bcrypt`,
//! `htpasswd`, `randBytes` and `uuidv4`.
//!
//! Keys and certificates come out as Go writes them: RSA keys as PKCS#1 `RSA PRIVATE KEY`,
//! P-256 keys as SEC1 `EC PRIVATE KEY`, Ed25519 keys as PKCS#8 `PRIVATE KEY`; certificates are
//! X.509 v3 with a random 128-bit serial, the common name as subject and Sprig's key usages.
//! DSA keys (`DSA PRIVATE KEY`) can be generated but, as in Go, not used to sign.

use aes::Aes256;
use aes::cipher::{BlockDecryptMut, BlockEncryptMut, KeyIvInit};
use hmac::{Hmac, Mac};
use p256::pkcs8::{DecodePrivateKey as _, EncodePrivateKey as _};
use rand_core::OsRng;
use rcgen::KeyPair;
use rsa::pkcs1::{DecodeRsaPrivateKey as _, EncodeRsaPrivateKey as _};
use sha2::Sha256;

use super::encoding::base64_decode;
use super::strings::random_bytes;
use super::{FuncError, FuncMap, args};
use crate::engine::value::Value;

mod certificate;

/// Registers the cryptographic functions.
pub fn install(funcs: &mut FuncMap) {
    funcs.add("bcrypt", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::from(bcrypt_hash(args::string(a, 0)?)))
    });
    funcs.add("htpasswd", |a: &[Value]| {
        args::count(a, 2)?;
        let user = args::string(a, 0)?;
        if user.contains(':') {
            return Ok(Value::from(format!("invalid username: {user}")));
        }
        Ok(Value::from(format!(
            "{user}:{}",
            bcrypt_hash(args::string(a, 1)?)
        )))
    });
    funcs.add("randBytes", |a: &[Value]| {
        args::count(a, 1)?;
        let count = usize::try_from(args::int(a, 0)?)
            .map_err(|_| FuncError::failed("runtime error: makeslice: len out of range"))?;
        if count > super::strings::MAX_OUTPUT {
            return Err(FuncError::failed(format!(
                "randBytes: {count} bytes exceed the limit of {} bytes",
                super::strings::MAX_OUTPUT
            )));
        }
        let mut buf = vec![0u8; count];
        random_bytes(&mut buf)?;
        Ok(Value::from(data_encoding::BASE64.encode(&buf)))
    });
    funcs.add("uuidv4", |a: &[Value]| {
        args::count(a, 0)?;
        Ok(Value::from(uuid_v4()?))
    });
    funcs.add("derivePassword", |a: &[Value]| {
        args::count(a, 5)?;
        let counter = uint32(a, 0)?;
        let strings = [1, 2, 3, 4].map(|i| args::string(a, i));
        let [kind, password, user, site] = strings;
        Ok(Value::from(derive_password(
            counter, kind?, password?, user?, site?,
        )))
    });
    funcs.add("encryptAES", |a: &[Value]| {
        args::count(a, 2)?;
        encrypt_aes(args::string(a, 0)?, args::string(a, 1)?).map(Value::from)
    });
    funcs.add("decryptAES", |a: &[Value]| {
        args::count(a, 2)?;
        decrypt_aes(args::string(a, 0)?, args::string(a, 1)?).map(Value::from)
    });
    funcs.add("genPrivateKey", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::from(generate_private_key(args::string(a, 0)?)))
    });
    certificate::install(funcs);
}

/// A Go `uint32` parameter: a non-negative integer that fits.
fn uint32(a: &[Value], index: usize) -> Result<u32, FuncError> {
    match a.get(index) {
        Some(Value::Int(i) | Value::Int64(i)) => u32::try_from(*i)
            .map_err(|_| FuncError::failed(format!("expected unsigned integer; found {i}"))),
        _ => Err(FuncError::ArgType {
            index,
            expected: "uint32".to_string(),
        }),
    }
}

/// Sprig's `bcrypt`: a `$2a$` hash at Go's default cost 10, or Sprig's failure text.
fn bcrypt_hash(input: &str) -> String {
    if input.len() > 72 {
        return "failed to encrypt string with bcrypt: bcrypt: password length exceeds 72 bytes"
            .to_string();
    }
    match bcrypt::hash_with_result(input, 10) {
        Ok(parts) => parts.format_for_version(bcrypt::Version::TwoA),
        Err(e) => format!("failed to encrypt string with bcrypt: {e}"),
    }
}

/// A random (version 4) UUID in its canonical text form.
fn uuid_v4() -> Result<String, FuncError> {
    let mut b = [0u8; 16];
    random_bytes(&mut b)?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex = super::encoding::hex(&b);
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    ))
}

/// Master Password's site templates, by password type.
fn password_templates(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "maximum" => &["anoxxxxxxxxxxxxxxxxx", "axxxxxxxxxxxxxxxxxno"],
        "long" => &[
            "CvcvnoCvcvCvcv",
            "CvcvCvcvnoCvcv",
            "CvcvCvcvCvcvno",
            "CvccnoCvcvCvcv",
            "CvccCvcvnoCvcv",
            "CvccCvcvCvcvno",
            "CvcvnoCvccCvcv",
            "CvcvCvccnoCvcv",
            "CvcvCvccCvcvno",
            "CvcvnoCvcvCvcc",
            "CvcvCvcvnoCvcc",
            "CvcvCvcvCvccno",
            "CvccnoCvccCvcv",
            "CvccCvccnoCvcv",
            "CvccCvccCvcvno",
            "CvcvnoCvccCvcc",
            "CvcvCvccnoCvcc",
            "CvcvCvccCvccno",
            "CvccnoCvcvCvcc",
            "CvccCvcvnoCvcc",
            "CvccCvcvCvccno",
        ],
        "medium" => &["CvcnoCvc", "CvcCvcno"],
        "short" => &["Cvcn"],
        "basic" => &["aaanaaan", "aannaaan", "aaannaaa"],
        "pin" => &["nnnn"],
        _ => return None,
    })
}

/// The characters a template letter stands for.
fn template_characters(class: u8) -> &'static [u8] {
    match class {
        b'V' => b"AEIOU",
        b'C' => b"BCDFGHJKLMNPQRSTVWXYZ",
        b'v' => b"aeiou",
        b'c' => b"bcdfghjklmnpqrstvwxyz",
        b'A' => b"AEIOUBCDFGHJKLMNPQRSTVWXYZ",
        b'a' => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz",
        b'n' => b"0123456789",
        b'o' => b"@&%?,=[]_:-+*$#!'^~;()/.",
        _ => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()",
    }
}

const MASTER_PASSWORD_SEED: &[u8] = b"com.lyndir.masterpassword";

/// The Master Password algorithm as Sprig implements it: scrypt(N=32768, r=8, p=2) of the
/// master password salted with the user name, then HMAC-SHA256 over the site and counter
/// choosing a template and its characters.
fn derive_password(counter: u32, kind: &str, password: &str, user: &str, site: &str) -> String {
    let Some(templates) = password_templates(kind) else {
        return format!("cannot find password template {kind}");
    };
    let mut salt = MASTER_PASSWORD_SEED.to_vec();
    salt.extend_from_slice(&(user.len() as u32).to_be_bytes());
    salt.extend_from_slice(user.as_bytes());
    let mut key = [0u8; 64];
    let derived = scrypt::Params::new(15, 8, 2, 64)
        .map_err(|e| e.to_string())
        .and_then(|params| {
            scrypt::scrypt(password.as_bytes(), &salt, &params, &mut key).map_err(|e| e.to_string())
        });
    if let Err(e) = derived {
        return format!("failed to derive password: {e}");
    }
    let mut message = MASTER_PASSWORD_SEED.to_vec();
    message.extend_from_slice(&(site.len() as u32).to_be_bytes());
    message.extend_from_slice(site.as_bytes());
    message.extend_from_slice(&counter.to_be_bytes());
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&key) else {
        return "failed to derive password: invalid key".to_string();
    };
    mac.update(&message);
    let seed = mac.finalize().into_bytes();
    let template = templates[usize::from(seed[0]) % templates.len()];
    template
        .bytes()
        .enumerate()
        .map(|(i, class)| {
            let chars = template_characters(class);
            char::from(chars[usize::from(seed[i + 1]) % chars.len()])
        })
        .collect()
}

/// Sprig's key: the password's bytes, zero-padded or cut to 32 (AES-256).
fn aes_key(password: &str) -> [u8; 32] {
    let mut key = [0u8; 32];
    let n = password.len().min(32);
    key[..n].copy_from_slice(&password.as_bytes()[..n]);
    key
}

/// Sprig's `encryptAES`: PKCS#7 padding, a random IV first, AES-256-CBC, base64.
fn encrypt_aes(password: &str, plaintext: &str) -> Result<String, FuncError> {
    if plaintext.is_empty() {
        return Ok(String::new());
    }
    let padding = 16 - plaintext.len() % 16;
    let mut content = plaintext.as_bytes().to_vec();
    content.extend(std::iter::repeat_n(padding as u8, padding));
    let mut iv = [0u8; 16];
    random_bytes(&mut iv)?;
    let mut cipher = cbc::Encryptor::<Aes256>::new(&aes_key(password).into(), &iv.into());
    for block in content.chunks_exact_mut(16) {
        cipher.encrypt_block_mut(block.into());
    }
    let mut out = iv.to_vec();
    out.extend_from_slice(&content);
    Ok(data_encoding::BASE64.encode(&out))
}

/// Sprig's `decryptAES`, with the errors Go raises (its slicing panics included) instead of
/// its crashes.
fn decrypt_aes(password: &str, encoded: &str) -> Result<String, FuncError> {
    if encoded.is_empty() {
        return Ok(String::new());
    }
    let data = base64_decode(encoded).map_err(FuncError::failed)?;
    if data.len() < 16 {
        return Err(FuncError::failed(format!(
            "runtime error: slice bounds out of range [:16] with capacity {}",
            data.len()
        )));
    }
    let (iv, body) = data.split_at(16);
    if body.len() % 16 != 0 {
        return Err(FuncError::failed("crypto/cipher: input not full blocks"));
    }
    if body.is_empty() {
        return Err(FuncError::failed("runtime error: index out of range [-1]"));
    }
    let mut plain = body.to_vec();
    let mut cipher = cbc::Decryptor::<Aes256>::new(&aes_key(password).into(), iv.into());
    for block in plain.chunks_exact_mut(16) {
        cipher.decrypt_block_mut(block.into());
    }
    let pad = usize::from(plain[plain.len() - 1]);
    let Some(end) = plain.len().checked_sub(pad) else {
        return Err(FuncError::failed(format!(
            "runtime error: slice bounds out of range [:{}]",
            plain.len() as i64 - pad as i64
        )));
    };
    Ok(String::from_utf8_lossy(&plain[..end]).into_owned())
}

/// A private key as Sprig handles it.
enum PrivateKey {
    Rsa(Box<rsa::RsaPrivateKey>),
    P256(p256::SecretKey),
    Ed25519([u8; 32]),
    /// The DER of OpenSSL's `DSA PRIVATE KEY` (version, p, q, g, y, x); Go cannot sign
    /// certificates with it.
    Dsa(Vec<u8>),
}

/// The PKCS#8 prefix of an Ed25519 key (RFC 8410), before its 32-byte seed.
const ED25519_PKCS8_PREFIX: [u8; 16] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];

impl PrivateKey {
    /// The PEM block Sprig writes for the key (`pemBlockForKey`).
    fn to_pem(&self) -> Result<String, String> {
        let (label, der) = match self {
            PrivateKey::Rsa(key) => (
                "RSA PRIVATE KEY",
                key.to_pkcs1_der()
                    .map_err(|e| e.to_string())?
                    .as_bytes()
                    .to_vec(),
            ),
            PrivateKey::P256(key) => (
                "EC PRIVATE KEY",
                key.to_sec1_der().map_err(|e| e.to_string())?.to_vec(),
            ),
            PrivateKey::Ed25519(_) => ("PRIVATE KEY", self.pkcs8()?),
            PrivateKey::Dsa(der) => ("DSA PRIVATE KEY", der.clone()),
        };
        Ok(pem_encode(label, &der))
    }

    fn pkcs8(&self) -> Result<Vec<u8>, String> {
        Ok(match self {
            PrivateKey::Rsa(key) => key
                .to_pkcs8_der()
                .map_err(|e| e.to_string())?
                .as_bytes()
                .to_vec(),
            PrivateKey::P256(key) => key
                .to_pkcs8_der()
                .map_err(|e| e.to_string())?
                .as_bytes()
                .to_vec(),
            PrivateKey::Ed25519(seed) => {
                let mut der = ED25519_PKCS8_PREFIX.to_vec();
                der.extend_from_slice(seed);
                der
            }
            PrivateKey::Dsa(_) => {
                return Err(
                    "x509: certificate private key does not implement crypto.Signer".into(),
                );
            }
        })
    }

    /// The key as rcgen signs with it, with the signature algorithm Go picks for its kind.
    fn key_pair(&self) -> Result<KeyPair, String> {
        let algorithm = match self {
            PrivateKey::Rsa(_) => &rcgen::PKCS_RSA_SHA256,
            PrivateKey::P256(_) => &rcgen::PKCS_ECDSA_P256_SHA256,
            PrivateKey::Ed25519(_) => &rcgen::PKCS_ED25519,
            PrivateKey::Dsa(_) => &rcgen::PKCS_RSA_SHA256,
        };
        let der = self.pkcs8()?;
        KeyPair::from_pkcs8_der_and_sign_algo(&der.as_slice().into(), algorithm)
            .map_err(|e| e.to_string())
    }
}

fn new_rsa_key(bits: usize) -> Result<PrivateKey, String> {
    super::primes::rsa_key(bits).map(|k| PrivateKey::Rsa(Box::new(k)))
}

/// A DSA key with Go's `dsa.L2048N256` parameters, encoded as OpenSSL's `DSA PRIVATE KEY`.
fn new_dsa_key() -> PrivateKey {
    let components = dsa::Components::generate(&mut OsRng, dsa::KeySize::DSA_2048_256);
    let key = dsa::SigningKey::generate(&mut OsRng, components);
    let public = key.verifying_key();
    let params = public.components();
    let fields = [
        dsa::BigUint::from(0u8),
        params.p().clone(),
        params.q().clone(),
        params.g().clone(),
        public.y().clone(),
        key.x().clone(),
    ];
    let mut body = Vec::new();
    for field in &fields {
        der_integer(&mut body, &field.to_bytes_be());
    }
    let mut der = Vec::new();
    der_header(&mut der, 0x30, body.len());
    der.extend_from_slice(&body);
    PrivateKey::Dsa(der)
}

/// A DER tag and length.
fn der_header(out: &mut Vec<u8>, tag: u8, len: usize) {
    out.push(tag);
    if len < 0x80 {
        out.push(len as u8);
        return;
    }
    let bytes = len.to_be_bytes();
    let skip = bytes.iter().take_while(|&&b| b == 0).count();
    out.push(0x80 | (bytes.len() - skip) as u8);
    out.extend_from_slice(&bytes[skip..]);
}

/// A DER INTEGER from unsigned big-endian bytes.
fn der_integer(out: &mut Vec<u8>, magnitude: &[u8]) {
    let skip = magnitude.iter().take_while(|&&b| b == 0).count();
    let digits = &magnitude[skip..];
    let pad = digits.first().is_none_or(|&b| b & 0x80 != 0);
    der_header(out, 0x02, digits.len() + usize::from(pad));
    if pad {
        out.push(0);
    }
    out.extend_from_slice(digits);
}

/// Whether `der` is one DER SEQUENCE of six INTEGERs, the shape Go's `asn1.Unmarshal` reads
/// into Sprig's `DSAKeyFormat`.
fn is_dsa_key(der: &[u8]) -> bool {
    fn read(der: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
        let (&t, rest) = der.split_first()?;
        if t != tag {
            return None;
        }
        let (&first, rest) = rest.split_first()?;
        let (len, rest) = if first < 0x80 {
            (usize::from(first), rest)
        } else {
            let n = usize::from(first & 0x7f);
            if n == 0 || n > 4 || rest.len() < n {
                return None;
            }
            let len = rest[..n]
                .iter()
                .fold(0usize, |acc, &b| acc << 8 | usize::from(b));
            (len, &rest[n..])
        };
        (rest.len() >= len).then(|| rest.split_at(len))
    }
    let Some((mut body, trailing)) = read(der, 0x30) else {
        return false;
    };
    for _ in 0..6 {
        match read(body, 0x02) {
            Some((_, rest)) => body = rest,
            None => return false,
        }
    }
    body.is_empty() && trailing.is_empty()
}

/// Sprig's `genPrivateKey`: the key as PEM, or Sprig's failure text.
fn generate_private_key(kind: &str) -> String {
    let key = match kind {
        "" | "rsa" => new_rsa_key(4096),
        "ecdsa" => Ok(PrivateKey::P256(p256::SecretKey::random(&mut OsRng))),
        "ed25519" => {
            let mut seed = [0u8; 32];
            random_bytes(&mut seed)
                .map(|()| PrivateKey::Ed25519(seed))
                .map_err(|e| e.to_string())
        }
        "dsa" => Ok(new_dsa_key()),
        _ => return format!("Unknown type {kind}"),
    };
    match key.and_then(|k| k.to_pem()) {
        Ok(pem) => pem,
        Err(e) if e.starts_with("failed") => e,
        Err(e) => format!("failed to generate private key: {e}"),
    }
}

/// Go's `pem.EncodeToMemory`: base64 in lines of 64 characters.
fn pem_encode(label: &str, der: &[u8]) -> String {
    let body = data_encoding::BASE64.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in body.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// Go's `pem.Decode` of the first block: its label and bytes.
fn pem_decode(text: &str) -> Option<(String, Vec<u8>)> {
    let start = text.find("-----BEGIN ")?;
    let rest = &text[start + "-----BEGIN ".len()..];
    let (label, rest) = rest.split_once("-----")?;
    let end_marker = format!("-----END {label}-----");
    let (body, _) = rest.split_once(&end_marker)?;
    // Headers (`Proc-Type: …`) end at a blank line; Go skips them.
    let body = match body.split_once("\n\n") {
        Some((headers, data)) if headers.contains(':') => data,
        _ => body,
    };
    let compact: String = body.chars().filter(|c| !c.is_whitespace()).collect();
    let der = data_encoding::BASE64.decode(compact.as_bytes()).ok()?;
    Some((label.to_string(), der))
}

/// Sprig's `parsePrivateKeyPEM`, with its messages.
fn parse_private_key(text: &str) -> Result<PrivateKey, String> {
    let (label, der) = pem_decode(text).ok_or("no PEM data in input")?;
    if label == "PRIVATE KEY" {
        return parse_pkcs8(&der).map_err(|e| format!("decoding PEM as PKCS#8: {e}"));
    }
    let Some(kind) = label.strip_suffix(" PRIVATE KEY") else {
        return Err(format!("no private key data in PEM block of type {label}"));
    };
    match kind {
        "RSA" => rsa::RsaPrivateKey::from_pkcs1_der(&der)
            .map(|k| PrivateKey::Rsa(Box::new(k)))
            .map_err(|e| format!("parsing RSA private key from PEM: {e}")),
        "EC" => p256::SecretKey::from_sec1_der(&der)
            .map(PrivateKey::P256)
            .map_err(|e| format!("parsing EC private key from PEM: {e}")),
        "DSA" if is_dsa_key(&der) => Ok(PrivateKey::Dsa(der)),
        "DSA" => Err("parsing DSA private key from PEM: asn1: structure error".to_string()),
        _ => Err(format!("invalid private key type {label}")),
    }
}

fn parse_pkcs8(der: &[u8]) -> Result<PrivateKey, String> {
    if der.len() == 48 && der.starts_with(&ED25519_PKCS8_PREFIX) {
        let mut seed = [0u8; 32];
        seed.copy_from_slice(&der[16..]);
        return Ok(PrivateKey::Ed25519(seed));
    }
    if let Ok(key) = rsa::RsaPrivateKey::from_pkcs8_der(der) {
        return Ok(PrivateKey::Rsa(Box::new(key)));
    }
    if let Ok(key) = p256::SecretKey::from_pkcs8_der(der) {
        return Ok(PrivateKey::P256(key));
    }
    Err("x509: PKCS#8 wrapping contained private key with unknown algorithm".to_string())
}

fn parse_key_arg(text: &str) -> Result<PrivateKey, String> {
    parse_private_key(text).map_err(|e| format!("parsing private key: {e}"))
}
