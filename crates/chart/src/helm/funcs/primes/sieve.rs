//! The sieve that rejects most prime candidates without a modular exponentiation: for a
//! window of consecutive odd numbers after a random start, every multiple of an odd prime
//! below [`SIEVE_BOUND`] is crossed out (and every number that is 1 modulo the RSA public
//! exponent, which could not have a private exponent), and only the rest are tested.
//!
//! Sieving costs one remainder of the start per small prime (per pair of primes below 2^16,
//! whose products fit 32 bits), then a few steps per crossed-out multiple. A remainder is a
//! chain of 32 multiply-and-subtract steps with a precomputed reciprocal, no division, so the
//! whole sieve of a 1024-bit start takes about 9 million instructions (callgrind) where one
//! exponentiation takes about 4.7 million. The bound 2^18 leaves 9.0% of odd numbers standing
//! where 2^16 leaves 10.1% (Mertens: 2·e^−γ / ln bound): about 4 fewer Miller–Rabin tests per
//! 1024-bit prime for the cost of 2. 2^17 saves about half as much for half the cost, 2^19
//! costs more than it saves. The tables are built once per process in about a millisecond.

use std::sync::OnceLock;

use num_bigint::BigUint;

/// Odd primes below this bound cross out candidates.
const SIEVE_BOUND: usize = 1 << 18;

/// Primes below this bound are sieved in pairs: their products fit 32 bits.
const PAIR_BOUND: u32 = 1 << 16;

/// Odd candidates in one window: the walk from a random start finds a 1024-bit prime after
/// about 355 odd numbers on average; a start without one this far is given up for a new one.
pub(super) const WINDOW: usize = 4096;

/// The odd primes below [`SIEVE_BOUND`], found once per process.
fn small_primes() -> &'static [u32] {
    static PRIMES: OnceLock<Vec<u32>> = OnceLock::new();
    PRIMES.get_or_init(|| {
        let mut composite = vec![false; SIEVE_BOUND];
        let mut primes = Vec::new();
        for n in (3..SIEVE_BOUND).step_by(2) {
            if composite[n] {
                continue;
            }
            primes.push(n as u32);
            for multiple in (n * n..SIEVE_BOUND).step_by(2 * n) {
                composite[multiple] = true;
            }
        }
        primes
    })
}

/// The moduli the start is reduced by: the small primes in pairs below [`PAIR_BOUND`], alone
/// above it; each below 2^32.
fn divisors() -> &'static [Divisor] {
    static DIVISORS: OnceLock<Vec<Divisor>> = OnceLock::new();
    DIVISORS.get_or_init(|| {
        let primes = small_primes();
        let paired = primes.partition_point(|&p| p < PAIR_BOUND);
        let pairs = primes[..paired].chunks(2).map(Divisor::new);
        let singles = primes[paired..].chunks(1).map(Divisor::new);
        pairs.chain(singles).collect()
    })
}

/// One modulus of the sieve: one or two small primes, their product and its reciprocal.
struct Divisor {
    primes: [u32; 2],
    count: usize,
    modulus: u64,
    /// ⌊(2^64 − 1) / modulus⌋, which turns each remainder step into multiplications.
    reciprocal: u64,
}

impl Divisor {
    fn new(primes: &[u32]) -> Self {
        let modulus = primes.iter().map(|&p| u64::from(p)).product::<u64>();
        let mut pair = [0; 2];
        pair[..primes.len()].copy_from_slice(primes);
        Divisor {
            primes: pair,
            count: primes.len(),
            modulus,
            reciprocal: u64::MAX / modulus,
        }
    }

    /// `digits` (base 2^32, most significant first) modulo the modulus: Barrett reduction of
    /// x = r·2^32 + digit < 2^64 per step. The reciprocal is ⌊2^64 / modulus⌋ (an odd modulus
    /// does not divide 2^64), so x·reciprocal / 2^64 falls short of x / modulus by less than
    /// x / 2^64 < 1 and the quotient estimate by at most one: one correction.
    fn remainder(&self, digits: &[u32]) -> u64 {
        digits.iter().fold(0, |r, &digit| {
            let x = r << 32 | u64::from(digit);
            let quotient = ((u128::from(x) * u128::from(self.reciprocal)) >> 64) as u64;
            let r = x - quotient * self.modulus;
            if r >= self.modulus {
                r - self.modulus
            } else {
                r
            }
        })
    }
}

/// Which of start, start + 2, …, start + 2·(WINDOW − 1) (for an odd start above
/// [`SIEVE_BOUND`]) survive: not divisible by a small prime and not 1 modulo `exponent`.
pub(super) fn survivors(start: &BigUint, exponent: u32) -> Vec<bool> {
    let mut digits = start.to_u32_digits();
    digits.reverse();
    let mut alive = vec![true; WINDOW];
    for divisor in divisors() {
        let remainder = divisor.remainder(&digits);
        let primes = &divisor.primes[..divisor.count];
        for &p in primes {
            // A lone prime's remainder is its residue; a pair's takes one more step.
            let residue = if primes.len() == 1 {
                remainder
            } else {
                remainder % u64::from(p)
            };
            cross_out(&mut alive, residue as u32, p, 0);
        }
    }
    let remainder = (start % exponent)
        .to_u32_digits()
        .first()
        .copied()
        .unwrap_or(0);
    cross_out(&mut alive, remainder, exponent, 1);
    alive
}

/// Crosses out the offsets k with start + 2k ≡ `target` (mod p), given start mod p (both
/// below p), for an odd prime p; without a division, which would cost as much as the
/// remainder itself for the primes above the window.
fn cross_out(alive: &mut [bool], start_residue: u32, p: u32, target: u32) {
    // k ≡ d·2⁻¹ (mod p) for the difference d = target − start: d/2 if d is even, else (d + p)/2.
    let difference = if target >= start_residue {
        target - start_residue
    } else {
        target + (p - start_residue)
    };
    let first = if difference % 2 == 0 {
        difference / 2
    } else {
        difference / 2 + p.div_ceil(2)
    };
    for k in (first as usize..alive.len()).step_by(p as usize) {
        alive[k] = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_holds_the_odd_primes_below_the_bound() {
        let primes = small_primes();
        assert_eq!(&primes[..6], [3, 5, 7, 11, 13, 17]);
        assert_eq!(primes.last(), Some(&262_139));
        // π(2^18) = 23000, less the prime 2.
        assert_eq!(primes.len(), 22_999);
    }

    #[test]
    fn survivors_are_exactly_the_numbers_without_small_factors() {
        let start = (BigUint::from(1u32) << 200u32) + 12_345u32;
        let alive = survivors(&start, 65_537);
        // Remainders of the start from num-bigint, stepped in plain integers.
        let residue = |p: u32| (&start % p).to_u64_digits().first().copied().unwrap_or(0);
        let residues: Vec<(u64, u64)> = small_primes()
            .iter()
            .map(|&p| (u64::from(p), residue(p)))
            .collect();
        let e_residue = residue(65_537);
        for (k, &alive) in alive.iter().enumerate() {
            let step = 2 * k as u64;
            let divisible = residues.iter().any(|&(p, r)| (r + step).is_multiple_of(p));
            let one_mod_e = (e_residue + step) % 65_537 == 1;
            assert_eq!(alive, !divisible && !one_mod_e, "offset {k}");
        }
        let standing = alive.iter().filter(|&&a| a).count();
        assert!((280..480).contains(&standing), "about 9%: {standing}");
    }

    /// The remainder by num-bigint, for digits most significant first.
    fn expected_remainder(digits: &[u32], modulus: u64) -> u64 {
        let mut little_endian = digits.to_vec();
        little_endian.reverse();
        let r = BigUint::from_slice(&little_endian) % modulus;
        r.to_u64_digits().first().copied().unwrap_or(0)
    }

    #[test]
    fn remainders_hold_at_the_largest_moduli_and_digits() {
        let largest_pair = small_primes()
            .iter()
            .filter(|&&p| p < PAIR_BOUND)
            .rev()
            .take(2)
            .copied()
            .collect::<Vec<_>>();
        let digits = [u32::MAX; 32];
        for primes in [&largest_pair[..], &[u32::MAX], &[3], &[262_139]] {
            let divisor = Divisor::new(primes);
            assert_eq!(
                divisor.remainder(&digits),
                expected_remainder(&digits, divisor.modulus),
                "{primes:?}"
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn remainders_match_num_bigint(
            digits in proptest::collection::vec(proptest::prelude::any::<u32>(), 1..64),
            index in proptest::prelude::any::<proptest::sample::Index>(),
        ) {
            let divisor = &divisors()[index.index(divisors().len())];
            proptest::prop_assert_eq!(
                divisor.remainder(&digits),
                expected_remainder(&digits, divisor.modulus)
            );
        }
    }
}
