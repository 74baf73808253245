//! RSA key generation for `genPrivateKey`, `genCA` and the certificate functions, fast enough
//! for a render: random primes are searched Go's way (random start with the top two bits set,
//! then the next odd numbers), but a sieve of the odd primes below [`SIEVE_BOUND`] rejects most
//! candidates before a Miller–Rabin round runs, where the `rsa` crate's generator sieves with
//! the primes up to 53 only and so runs about twice as many expensive tests per prime.

use num_bigint::BigUint;
use num_traits::One;

/// Candidates divisible by an odd prime below this bound are rejected without a modular
/// exponentiation (87% of odd numbers).
const SIEVE_BOUND: u32 = 1 << 12;

/// Miller–Rabin rounds for a candidate that passed the sieve: the first with base 2, the
/// others with random bases, as Go's `ProbablyPrime(20)` does before its Lucas test.
const ROUNDS: usize = 20;

/// How far the search walks from one random start before drawing another (Go: 2^20).
const MAX_DELTA: u32 = 1 << 20;

/// Go's `rsa.GenerateKey` public exponent.
const PUBLIC_EXPONENT: u32 = 65_537;

/// A new two-prime RSA key whose modulus has exactly `bits` bits.
pub fn rsa_key(bits: usize) -> Result<rsa::RsaPrivateKey, String> {
    if bits < 64 {
        return Err(format!("crypto/rsa: {bits}-bit keys are too small"));
    }
    let small = small_primes();
    loop {
        let p = random_prime(bits - bits / 2, &small)?;
        let q = random_prime(bits / 2, &small)?;
        if p == q {
            continue;
        }
        let primes = [p, q].map(|prime| rsa::BigUint::from_bytes_be(&prime.to_bytes_be()));
        // A prime with e | p-1 has no private exponent; Go draws again in that case too.
        let Ok(key) =
            rsa::RsaPrivateKey::from_primes(primes.to_vec(), rsa::BigUint::from(PUBLIC_EXPONENT))
        else {
            continue;
        };
        key.validate()
            .map_err(|e| format!("error generating rsa key: {e}"))?;
        return Ok(key);
    }
}

/// The odd primes below [`SIEVE_BOUND`].
fn small_primes() -> Vec<u32> {
    let bound = SIEVE_BOUND as usize;
    let mut composite = vec![false; bound];
    let mut primes = Vec::new();
    for n in 3..bound {
        if composite[n] {
            continue;
        }
        if n % 2 == 1 {
            primes.push(n as u32);
        }
        for multiple in (n * n..bound).step_by(n) {
            composite[multiple] = true;
        }
    }
    primes
}

/// A random prime of exactly `bits` bits with its top two bits set (so a product of two has
/// twice as many bits).
fn random_prime(bits: usize, small: &[u32]) -> Result<BigUint, String> {
    loop {
        let start = random_start(bits)?;
        let remainders: Vec<u32> = small
            .iter()
            .map(|&p| (&start % p).try_into().unwrap_or(0))
            .collect();
        for delta in (0..MAX_DELTA).step_by(2) {
            let divisible = small
                .iter()
                .zip(&remainders)
                .any(|(&p, &r)| (u64::from(r) + u64::from(delta)) % u64::from(p) == 0);
            if divisible {
                continue;
            }
            let candidate = &start + delta;
            if candidate.bits() as usize != bits {
                break;
            }
            if is_probable_prime(&candidate)? {
                return Ok(candidate);
            }
        }
    }
}

/// A random odd number of `bits` bits with the top two bits set.
fn random_start(bits: usize) -> Result<BigUint, String> {
    let mut bytes = random_bytes(bits.div_ceil(8))?;
    bytes[0] &= 0xff >> (bytes.len() * 8 - bits);
    let mut value = BigUint::from_bytes_be(&bytes);
    value.set_bit(bits as u64 - 1, true);
    value.set_bit(bits as u64 - 2, true);
    value.set_bit(0, true);
    Ok(value)
}

fn random_bytes(len: usize) -> Result<Vec<u8>, String> {
    let mut bytes = vec![0u8; len];
    getrandom::fill(&mut bytes).map_err(|e| format!("crypto/rand: {e}"))?;
    Ok(bytes)
}

/// Miller–Rabin with [`ROUNDS`] bases for an odd `n` greater than 3.
fn is_probable_prime(n: &BigUint) -> Result<bool, String> {
    let one = BigUint::one();
    let n_minus_1 = n - 1u32;
    let shift = n_minus_1.trailing_zeros().unwrap_or(0);
    let odd_part = &n_minus_1 >> shift;
    let n_minus_3 = n - 3u32;
    for round in 0..ROUNDS {
        let base = if round == 0 {
            BigUint::from(2u32)
        } else {
            BigUint::from_bytes_be(&random_bytes(n.bits().div_ceil(8) as usize)?) % &n_minus_3
                + 2u32
        };
        let mut x = base.modpow(&odd_part, n);
        if x == one || x == n_minus_1 {
            continue;
        }
        let mut witness = true;
        for _ in 1..shift {
            x = &x * &x % n;
            if x == n_minus_1 {
                witness = false;
                break;
            }
            if x == one {
                return Ok(false);
            }
        }
        if witness {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sieve_holds_the_odd_primes() {
        let small = small_primes();
        assert_eq!(&small[..6], [3, 5, 7, 11, 13, 17]);
        assert_eq!(small.last(), Some(&4093));
    }

    #[test]
    fn miller_rabin_separates_primes_from_composites() {
        let mersenne_127 = (BigUint::one() << 127) - 1u32;
        assert_eq!(is_probable_prime(&mersenne_127), Ok(true));
        // 2^128 + 1 is composite (274177 · 67280421310721 · …); so is a Carmichael number.
        let fermat_7 = (BigUint::one() << 128) + 1u32;
        assert_eq!(is_probable_prime(&fermat_7), Ok(false));
        assert_eq!(is_probable_prime(&BigUint::from(561u32)), Ok(false));
        assert_eq!(is_probable_prime(&BigUint::from(7919u32)), Ok(true));
    }

    #[test]
    fn keys_have_the_requested_modulus_size_and_validate() {
        use rsa::traits::{PrivateKeyParts as _, PublicKeyParts as _};
        let key = rsa_key(1024).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(key.n().bits(), 1024);
        assert_eq!(key.e(), &rsa::BigUint::from(PUBLIC_EXPONENT));
        assert_eq!(key.primes().len(), 2);
        assert!(key.validate().is_ok());
    }
}
