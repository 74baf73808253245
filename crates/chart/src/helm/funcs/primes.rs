//! RSA key generation for `genPrivateKey`, `genCA` and the certificate functions, fast enough
//! for a render. Primes are searched Go's way (a random start with the top two bits set, then
//! the next odd numbers); a sieve crosses out the candidates with a factor below 2^18 (and
//! those that are 1 modulo e), a base-2 Miller–Rabin round rejects almost every remaining
//! composite, and the survivor gets the random-base rounds FIPS 186-5 asks for. Two threads
//! search at once, and a key takes the first two primes they find.

mod montgomery;
mod sieve;

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use num_bigint::BigUint;
use num_traits::One;

use montgomery::{Limbs, Modulus};

/// Go's `rsa.GenerateKey` public exponent.
const PUBLIC_EXPONENT: u32 = 65_537;

/// A new two-prime RSA key whose modulus has exactly `bits` bits.
pub fn rsa_key(bits: usize) -> Result<rsa::RsaPrivateKey, String> {
    if bits < 64 {
        return Err(format!("crypto/rsa: {bits}-bit keys are too small"));
    }
    loop {
        let (p, q) = prime_pair(bits - bits / 2, bits / 2)?;
        // FIPS 186-5 A.1.3: primes this close would let n be factored (never by chance).
        let distance = if p > q { &p - &q } else { &q - &p };
        if distance.bits() as usize <= (bits / 2).saturating_sub(100) {
            continue;
        }
        let primes = [p, q].map(|prime| rsa::BigUint::from_bytes_be(&prime.to_bytes_be()));
        // The sieve keeps p ≢ 1 (mod e), so the private exponent exists; drawing again on an
        // error is Go's answer should it not. `from_primes` validates the key (n = p·q and
        // d·e ≡ 1 modulo p − 1 and q − 1) before it returns it.
        if let Ok(key) =
            rsa::RsaPrivateKey::from_primes(primes.to_vec(), rsa::BigUint::from(PUBLIC_EXPONENT))
        {
            return Ok(key);
        }
    }
}

/// Two random primes of the given sizes, searched by two threads at once (one when another
/// cannot be started). Each thread searches for its own slot, then for whichever slot is still
/// empty, so a key waits for the second prime the two threads find between them, not for the
/// slower of two separate searches: for equal sizes that is a third less time on average (the
/// slower of two exponential waits takes 1.5 times one on average; the second event of their
/// merged stream comes after one).
fn prime_pair(p_bits: usize, q_bits: usize) -> Result<(BigUint, BigUint), String> {
    let slots = Slots::new([p_bits, q_bits]);
    std::thread::scope(|scope| {
        let helper = std::thread::Builder::new()
            .name("rsa-prime".to_string())
            .spawn_scoped(scope, || slots.fill(1));
        let filled = slots.fill(0);
        // On an error the slots stop the other thread too.
        if let Ok(handle) = helper {
            handle
                .join()
                .map_err(|_| "crypto/rsa: prime search thread failed".to_string())??;
        }
        filled
    })?;
    slots.take()
}

/// The primes of one key as the search threads find them.
struct Slots {
    sizes: [usize; 2],
    primes: Mutex<[Option<BigUint>; 2]>,
    /// Set once both slots are filled (or a search failed): the searches stop at their next
    /// candidate.
    done: AtomicBool,
}

impl Slots {
    fn new(sizes: [usize; 2]) -> Self {
        Slots {
            sizes,
            primes: Mutex::new([None, None]),
            done: AtomicBool::new(false),
        }
    }

    /// Searches primes for slot `own`, then for the other if still empty, until both are filled.
    fn fill(&self, own: usize) -> Result<(), String> {
        while let Some(bits) = self.missing_size(own) {
            match random_prime(bits, &self.done) {
                Ok(Some(prime)) => self.offer(prime),
                Ok(None) => {}
                Err(e) => {
                    self.done.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// The size of slot `own` if empty, else of the other if empty, else `None` (the key has
    /// both primes).
    fn missing_size(&self, own: usize) -> Option<usize> {
        if self.done.load(Ordering::Relaxed) {
            return None;
        }
        let primes = self.lock();
        let empty = [own, 1 - own].into_iter().find(|&i| primes[i].is_none())?;
        Some(self.sizes[empty])
    }

    /// Puts a prime into the first empty slot of its size (dropping it if the other thread
    /// filled that slot first).
    fn offer(&self, prime: BigUint) {
        let bits = prime.bits() as usize;
        let mut primes = self.lock();
        let empty = (0..2).find(|&i| primes[i].is_none() && self.sizes[i] == bits);
        if let Some(i) = empty {
            primes[i] = Some(prime);
        }
        if primes.iter().all(Option::is_some) {
            self.done.store(true, Ordering::Relaxed);
        }
    }

    fn take(&self) -> Result<(BigUint, BigUint), String> {
        match std::mem::take(&mut *self.lock()) {
            [Some(p), Some(q)] => Ok((p, q)),
            _ => Err("crypto/rsa: prime search stopped early".to_string()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, [Option<BigUint>; 2]> {
        // The slots hold plain values, consistent even if a thread panicked holding the lock.
        self.primes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A random prime of exactly `bits` bits (at least 32) with its top two bits set, so that a
/// product of two has twice as many bits; `None` once `stop` is set.
fn random_prime(bits: usize, stop: &AtomicBool) -> Result<Option<BigUint>, String> {
    let rounds = random_base_rounds(bits);
    while !stop.load(Ordering::Relaxed) {
        let start = random_start(bits)?;
        let alive = sieve::survivors(&start, PUBLIC_EXPONENT);
        for (offset, _) in alive.iter().enumerate().filter(|(_, alive)| **alive) {
            if stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let candidate = &start + 2 * offset as u64;
            if candidate.bits() as usize != bits {
                break;
            }
            if is_probable_prime(&candidate, rounds)? {
                return Ok(Some(candidate));
            }
        }
    }
    Ok(None)
}

/// Miller–Rabin rounds with random bases for a candidate that passed the sieve and the base-2
/// round: FIPS 186-5 Table B.1 asks for 5 for 1024-bit primes (error below 2^−112) and 4
/// from 1536 bits (below 2^−128). Shorter primes, which no Sprig function asks for, keep the
/// 20 rounds of Go's `ProbablyPrime(20)`.
fn random_base_rounds(bits: usize) -> usize {
    match bits {
        1536.. => 4,
        1024.. => 5,
        _ => 20,
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

/// Miller–Rabin for an odd `n > 3`: base 2, then `rounds` random bases.
fn is_probable_prime(n: &BigUint, rounds: usize) -> Result<bool, String> {
    // The fixed widths cover primes for keys up to 8192 bits; Sprig asks for 2048 and 4096.
    match n.to_u64_digits().len() {
        0..=8 => miller_rabin::<8, 16>(n, rounds),
        9..=16 => miller_rabin::<16, 32>(n, rounds),
        17..=32 => miller_rabin::<32, 64>(n, rounds),
        33..=64 => miller_rabin::<64, 128>(n, rounds),
        _ => Err(format!("crypto/rsa: {}-bit primes are too large", n.bits())),
    }
}

fn miller_rabin<const N: usize, const W: usize>(
    n: &BigUint,
    rounds: usize,
) -> Result<bool, String> {
    let r_squared = (BigUint::one() << (128 * N)) % n;
    let modulus = Modulus::<N, W>::new(limbs(n), limbs(&r_squared));
    let n_minus_1 = n - 1u32;
    let shift = n_minus_1.trailing_zeros().unwrap_or(0);
    let odd_part = limbs(&(&n_minus_1 >> shift));
    let (one, minus_one) = (modulus.one(), modulus.minus_one());
    // Whether base^odd_part (given) proves n composite: it is neither ±1 nor reaches −1 by
    // squaring.
    let is_witness = |mut x: Limbs<N>| {
        if x == one || x == minus_one {
            return false;
        }
        for _ in 1..shift {
            x = modulus.square(&x);
            if x == minus_one {
                return false;
            }
            if x == one {
                return true;
            }
        }
        true
    };
    if is_witness(modulus.pow2(&odd_part)) {
        return Ok(false);
    }
    let n_minus_3 = n - 3u32;
    for _ in 0..rounds {
        // A base in [2, n − 2].
        let base = BigUint::from_bytes_be(&random_bytes(n.bits().div_ceil(8) as usize)?)
            % &n_minus_3
            + 2u32;
        let base = modulus.to_montgomery(&limbs(&base));
        if is_witness(modulus.pow(&base, &odd_part)) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `x` (below 2^(64·N)) as limbs.
fn limbs<const N: usize>(x: &BigUint) -> Limbs<N> {
    let mut out = [0; N];
    for (limb, digit) in out.iter_mut().zip(x.iter_u64_digits()) {
        *limb = digit;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn miller_rabin_separates_primes_from_composites() {
        let mersenne_127 = (BigUint::one() << 127) - 1u32;
        assert_eq!(is_probable_prime(&mersenne_127, 20), Ok(true));
        // 2^128 + 1 is composite (274177 · 67280421310721 · …); so is a Carmichael number.
        let fermat_7 = (BigUint::one() << 128) + 1u32;
        assert_eq!(is_probable_prime(&fermat_7, 20), Ok(false));
        assert_eq!(is_probable_prime(&BigUint::from(561u32), 20), Ok(false));
        assert_eq!(is_probable_prime(&BigUint::from(7919u32), 20), Ok(true));
        // M521 and M1279 need 9 and 20 limbs; 2^1279 + 1 is divisible by 3.
        let mersenne_521 = (BigUint::one() << 521) - 1u32;
        assert_eq!(is_probable_prime(&mersenne_521, 5), Ok(true));
        let mersenne_1279 = (BigUint::one() << 1279) - 1u32;
        assert_eq!(is_probable_prime(&mersenne_1279, 4), Ok(true));
        assert_eq!(is_probable_prime(&(mersenne_1279 + 2u32), 4), Ok(false));
    }

    #[test]
    fn strong_pseudoprimes_to_base_two_fall_to_random_bases() {
        // 3215031751 = 151·751·28351 passes bases 2, 3, 5 and 7; 2047 = 23·89 passes base 2.
        for n in [3_215_031_751u32, 2047] {
            assert_eq!(is_probable_prime(&BigUint::from(n), 20), Ok(false), "{n}");
        }
    }

    #[test]
    fn primes_have_the_requested_size_and_top_bits() {
        for bits in [32, 64, 100, 512] {
            let p = random_prime(bits, &AtomicBool::new(false))
                .unwrap_or_else(|e| panic!("{e}"))
                .expect("not stopped");
            assert_eq!(p.bits() as usize, bits);
            assert!(p.bit(bits as u64 - 2), "second bit set");
            assert_ne!(&p % PUBLIC_EXPONENT, BigUint::one(), "e has an inverse");
            assert_eq!(is_probable_prime(&p, 20), Ok(true));
        }
    }

    #[test]
    fn keys_have_the_requested_modulus_size_and_validate() {
        use rsa::traits::{PrivateKeyParts as _, PublicKeyParts as _};
        // 1025 bits: primes of 513 and 512 bits, which the two threads share out by size.
        for bits in [1024, 1025, 2048] {
            let key = rsa_key(bits).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(key.n().bits(), bits);
            assert_eq!(key.e(), &rsa::BigUint::from(PUBLIC_EXPONENT));
            let [p, q] = key.primes() else {
                panic!("two primes")
            };
            assert_eq!(&(p * q), key.n());
            assert!(key.validate().is_ok());
        }
    }
}
