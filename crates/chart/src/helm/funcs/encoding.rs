//! Sprig's encodings and checksums: base64 and base32 with Go's decoders (including where
//! they report an error), SHA-1/256/512 and Adler-32.

use sha1::Sha1;
use sha2::{Digest, Sha256, Sha512};

use super::{FuncMap, args};
use crate::engine::value::Value;

/// A function from a string's bytes to a string.
type BytesFn = fn(&[u8]) -> String;

/// A decoder from a string to a Go string of any bytes.
type DecodeFn = fn(&str) -> Result<Vec<u8>, String>;

/// Registers the encoding and checksum functions.
pub fn install(funcs: &mut FuncMap) {
    let encoders: [(&str, BytesFn); 6] = [
        ("b64enc", |s| data_encoding::BASE64.encode(s)),
        ("b32enc", |s| data_encoding::BASE32.encode(s)),
        ("sha1sum", |s| hex(&Sha1::digest(s))),
        ("sha256sum", |s| hex(&Sha256::digest(s))),
        ("sha512sum", |s| hex(&Sha512::digest(s))),
        ("adler32sum", |s| adler32(s).to_string()),
    ];
    for (name, f) in encoders {
        funcs.add(name, move |a: &[Value]| {
            args::count(a, 1)?;
            Ok(Value::from(f(args::string_bytes(a, 0)?)))
        });
    }
    let decoders: [(&str, DecodeFn); 2] = [("b64dec", base64_decode), ("b32dec", base32_decode)];
    for (name, f) in decoders {
        funcs.add(name, move |a: &[Value]| {
            args::count(a, 1)?;
            Ok(decoded(f(args::string(a, 0)?)))
        });
    }
}

/// Sprig returns the decoded bytes as a Go string (any bytes, not only UTF-8), and a decoding
/// error's message as the result.
fn decoded(result: Result<Vec<u8>, String>) -> Value {
    match result {
        Ok(bytes) => Value::string_from_bytes(bytes),
        Err(message) => Value::from(message),
    }
}

/// Lower-case hexadecimal.
pub(crate) fn hex(bytes: &[u8]) -> String {
    data_encoding::HEXLOWER.encode(bytes)
}

/// Go's `hash/adler32.Checksum`.
fn adler32(data: &[u8]) -> u32 {
    const MOD: u32 = 65521;
    let (mut a, mut b) = (1u32, 0u32);
    // 5552 bytes is the most that can be summed before b overflows 32 bits.
    for chunk in data.chunks(5552) {
        for &byte in chunk {
            a += u32::from(byte);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

fn base64_value(b: u8) -> Option<u32> {
    let v = match b {
        b'A'..=b'Z' => b - b'A',
        b'a'..=b'z' => b - b'a' + 26,
        b'0'..=b'9' => b - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    };
    Some(u32::from(v))
}

fn corrupt(kind: &str, offset: usize) -> String {
    format!("illegal {kind} data at input byte {offset}")
}

/// Go's `base64.StdEncoding.DecodeString`: newlines ignored, padding required, the offset of
/// the first bad byte in the error.
pub(crate) fn base64_decode(s: &str) -> Result<Vec<u8>, String> {
    let src = s.as_bytes();
    let is_newline = |b: u8| b == b'\n' || b == b'\r';
    let mut out = Vec::with_capacity(src.len() / 4 * 3);
    let mut si = 0;
    while si < src.len() {
        let mut quantum = [0u32; 4];
        let mut len = 4;
        let mut trailing: Option<usize> = None;
        let mut j = 0;
        while j < 4 {
            if si == src.len() {
                if j == 0 {
                    return Ok(out);
                }
                return Err(corrupt("base64", si - j));
            }
            let byte = src[si];
            si += 1;
            if let Some(v) = base64_value(byte) {
                quantum[j] = v;
                j += 1;
                continue;
            }
            if is_newline(byte) {
                continue;
            }
            if byte != b'=' || j < 2 {
                return Err(corrupt("base64", si - 1));
            }
            if j == 2 {
                // "==" is expected; the first "=" is consumed.
                while si < src.len() && is_newline(src[si]) {
                    si += 1;
                }
                if si == src.len() {
                    return Err(corrupt("base64", src.len()));
                }
                if src[si] != b'=' {
                    return Err(corrupt("base64", si - 1));
                }
                si += 1;
            }
            while si < src.len() && is_newline(src[si]) {
                si += 1;
            }
            if si < src.len() {
                trailing = Some(si);
            }
            len = j;
            break;
        }
        let v = quantum[0] << 18 | quantum[1] << 12 | quantum[2] << 6 | quantum[3];
        let bytes = [(v >> 16) as u8, (v >> 8) as u8, v as u8];
        out.extend_from_slice(&bytes[..len - 1]);
        if let Some(offset) = trailing {
            return Err(corrupt("base64", offset));
        }
        if len < 4 {
            return Ok(out);
        }
    }
    Ok(out)
}

fn base32_value(b: u8) -> Option<u8> {
    match b {
        b'A'..=b'Z' => Some(b - b'A'),
        b'2'..=b'7' => Some(b - b'2' + 26),
        _ => None,
    }
}

/// Go's `base32.StdEncoding.DecodeString`: newlines removed first, then 8-character quanta
/// with RFC 4648 padding.
pub(crate) fn base32_decode(s: &str) -> Result<Vec<u8>, String> {
    let src: Vec<u8> = s.bytes().filter(|&b| b != b'\n' && b != b'\r').collect();
    let total = src.len();
    let mut out = Vec::with_capacity(total / 8 * 5);
    let mut rest = &src[..];
    let mut end = false;
    while !rest.is_empty() && !end {
        let mut q = [0u8; 8];
        let mut len = 8;
        let mut j = 0;
        while j < 8 {
            let Some((&byte, tail)) = rest.split_first() else {
                return Err(corrupt("base32", total - j));
            };
            rest = tail;
            if byte == b'=' && j >= 2 && rest.len() < 8 {
                if rest.len() + j < 7 {
                    return Err(corrupt("base32", total));
                }
                for k in 0..7 - j {
                    if rest.len() > k && rest[k] != b'=' {
                        return Err(corrupt("base32", total - rest.len() + k - 1));
                    }
                }
                len = j;
                end = true;
                if matches!(len, 1 | 3 | 6) {
                    return Err(corrupt("base32", total - rest.len() - 1));
                }
                break;
            }
            q[j] = base32_value(byte).ok_or_else(|| corrupt("base32", total - rest.len() - 1))?;
            j += 1;
        }
        let bytes = [
            q[0] << 3 | q[1] >> 2,
            q[1] << 6 | q[2] << 1 | q[3] >> 4,
            q[3] << 4 | q[4] >> 1,
            q[4] << 7 | q[5] << 2 | q[6] >> 3,
            q[6] << 5 | q[7],
        ];
        let produced = match len {
            8 => 5,
            7 => 4,
            5 => 3,
            4 => 2,
            2 => 1,
            _ => 0,
        };
        out.extend_from_slice(&bytes[..produced]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes_like_go() {
        assert_eq!(base64_decode("Y29mZmVl").ok(), Some(b"coffee".to_vec()));
        assert_eq!(base64_decode("Y29m\nZmVl").ok(), Some(b"coffee".to_vec()));
        assert_eq!(base64_decode("YQ==").ok(), Some(b"a".to_vec()));
        assert_eq!(base64_decode("YWI=").ok(), Some(b"ab".to_vec()));
        assert_eq!(
            base64_decode("YQ").err().as_deref(),
            Some("illegal base64 data at input byte 0")
        );
        assert_eq!(
            base64_decode("Y29!").err().as_deref(),
            Some("illegal base64 data at input byte 3")
        );
        assert_eq!(
            base64_decode("YQ==YQ==").err().as_deref(),
            Some("illegal base64 data at input byte 4")
        );
    }

    #[test]
    fn base32_decodes_like_go() {
        assert_eq!(
            base32_decode("MNXWMZTFMU======").ok(),
            Some(b"coffee".to_vec())
        );
        assert_eq!(base32_decode("MFRGG===").ok(), Some(b"abc".to_vec()));
        assert_eq!(
            base32_decode("MNXW1").err().as_deref(),
            Some("illegal base32 data at input byte 4")
        );
        assert_eq!(
            base32_decode("MFRG").err().as_deref(),
            Some("illegal base32 data at input byte 0")
        );
    }

    #[test]
    fn adler32_matches_known_sums() {
        assert_eq!(adler32(b"abc"), 38600999);
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        assert_eq!(adler32(&vec![0xffu8; 100_000]), {
            let (mut a, mut b) = (1u64, 0u64);
            for _ in 0..100_000 {
                a = (a + 255) % 65521;
                b = (b + a) % 65521;
            }
            ((b << 16) | a) as u32
        });
    }
}
