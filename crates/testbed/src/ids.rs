//! Random identifiers: object uids and `generateName` suffixes.

use ring::rand::{SecureRandom, SystemRandom};

/// The alphabet kube-apiserver draws generated name suffixes from (no vowels, no 0/1/3).
const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// Fills `buf` with random bytes.
pub fn random_bytes(buf: &mut [u8]) {
    // SystemRandom only fails when the OS has no entropy source, which makes the
    // whole server meaningless; fall back to the clock rather than panic.
    if SystemRandom::new().fill(buf).is_err() {
        let seed = crate::clock::unix_now();
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (seed.1 as usize).wrapping_mul(31).wrapping_add(i * 17) as u8;
        }
    }
}

/// A random version-4 UUID in lowercase hex.
pub fn new_uid() -> String {
    let mut b = [0u8; 16];
    random_bytes(&mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut uid = String::with_capacity(36);
    for (i, x) in b.iter().enumerate() {
        // Groups of 4, 2, 2, 2 and 6 bytes.
        if matches!(i, 4 | 6 | 8 | 10) {
            uid.push('-');
        }
        uid.push(char::from(HEX[usize::from(x >> 4)]));
        uid.push(char::from(HEX[usize::from(x & 0x0f)]));
    }
    uid
}

/// `prefix` plus five random characters, as `metadata.generateName` produces.
pub fn generated_name(prefix: &str) -> String {
    let mut b = [0u8; 5];
    random_bytes(&mut b);
    let suffix: String = b
        .iter()
        .map(|x| NAME_ALPHABET[*x as usize % NAME_ALPHABET.len()] as char)
        .collect();
    // Like kube-apiserver, keep the whole name within 63 characters.
    let max_prefix = 63 - suffix.len();
    let mut end = prefix.len().min(max_prefix);
    while !prefix.is_char_boundary(end) {
        end -= 1;
    }
    let prefix = &prefix[..end];
    format!("{prefix}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uid_has_uuid_shape() {
        let uid = new_uid();
        assert_eq!(uid.len(), 36);
        assert_eq!(uid.as_bytes()[14], b'4');
        let groups: Vec<usize> = uid.split('-').map(str::len).collect();
        assert_eq!(groups, [8, 4, 4, 4, 12]);
        assert!(
            uid.bytes()
                .all(|c| c == b'-' || c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_ne!(uid, new_uid());
    }

    #[test]
    fn generated_name_uses_kubernetes_alphabet() {
        let name = generated_name("gen-");
        assert!(name.starts_with("gen-"));
        assert!(name[4..].bytes().all(|c| NAME_ALPHABET.contains(&c)));
        assert_eq!(name.len(), 9);
    }

    #[test]
    fn long_generate_name_prefixes_are_cut_on_character_boundaries() {
        let name = generated_name(&"é".repeat(40));
        assert!(name.len() <= 63);
    }
}
