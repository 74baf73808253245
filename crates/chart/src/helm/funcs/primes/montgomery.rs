//! Modular exponentiation for the Miller–Rabin rounds of prime generation, in Montgomery form
//! on fixed-width numbers of `N` 64-bit limbs (least significant first).
//!
//! Why not `num_bigint::BigUint::modpow`: it allocates for every product and walks limb
//! vectors of unknown length, where a 1024-bit prime always has 16 limbs; fixed arrays let
//! the compiler unroll the multiply–accumulate chains and keep everything on the stack,
//! which makes an exponentiation several times faster (see `benches/keys.rs`).
//! Key generation is not constant-time here, as it is not in `num_bigint` or Go's `math/big`.

/// A number of `N` limbs, least significant limb first.
pub(super) type Limbs<const N: usize> = [u64; N];

/// Arithmetic modulo one odd number `n` of at most `N` limbs, with R = 2^(64·N); `W` is 2·N,
/// the width of a full square (stable Rust cannot write `2 * N` as an array length).
pub(super) struct Modulus<const N: usize, const W: usize> {
    n: Limbs<N>,
    /// −n⁻¹ mod 2^64, the factor that clears the low limb in each reduction step.
    n_prime: u64,
    /// R mod n: one in Montgomery form.
    one: Limbs<N>,
    /// R² mod n: multiplying by it brings a number into Montgomery form.
    r_squared: Limbs<N>,
}

/// Bits per window of the sliding-window exponentiation: 16 odd powers in the table, one
/// multiplication per six exponent bits on average.
const WINDOW: usize = 5;

impl<const N: usize, const W: usize> Modulus<N, W> {
    /// The context for an odd `n` (`n > 1`) given with R² mod n, which the caller computes
    /// once with a general division.
    pub(super) fn new(n: Limbs<N>, r_squared: Limbs<N>) -> Self {
        const { assert!(W == 2 * N) };
        let mut modulus = Modulus {
            n,
            n_prime: neg_inverse(n[0]),
            one: [0; N],
            r_squared,
        };
        let mut one = [0; N];
        one[0] = 1;
        // Montgomery reduction of R² is R.
        modulus.one = modulus.mul(&one, &modulus.r_squared);
        modulus
    }

    /// One in Montgomery form.
    pub(super) fn one(&self) -> Limbs<N> {
        self.one
    }

    /// n − 1 in Montgomery form (n − R mod n).
    pub(super) fn minus_one(&self) -> Limbs<N> {
        sub(&self.n, &self.one).0
    }

    /// `x` (below n) in Montgomery form.
    pub(super) fn to_montgomery(&self, x: &Limbs<N>) -> Limbs<N> {
        self.mul(x, &self.r_squared)
    }

    /// a·b·R⁻¹ mod n for a, b below n (CIOS: multiplication and reduction interleaved one limb
    /// at a time, so the running sum stays below 2n and N + 1 limbs).
    pub(super) fn mul(&self, a: &Limbs<N>, b: &Limbs<N>) -> Limbs<N> {
        let mut t = [0u64; N];
        let mut top = 0u64;
        for &a_i in a {
            let mut carry = 0;
            for (t_j, &b_j) in t.iter_mut().zip(b) {
                (*t_j, carry) = mac(*t_j, a_i, b_j, carry);
            }
            let (high, overflow) = top.overflowing_add(carry);
            let m = t[0].wrapping_mul(self.n_prime);
            let (_, mut carry) = mac(t[0], m, self.n[0], 0);
            for j in 1..N {
                (t[j - 1], carry) = mac(t[j], m, self.n[j], carry);
            }
            let (last, overflow2) = high.overflowing_add(carry);
            t[N - 1] = last;
            top = u64::from(overflow) + u64::from(overflow2);
        }
        let (difference, borrow) = sub(&t, &self.n);
        if top != 0 || !borrow { difference } else { t }
    }

    /// x²·R⁻¹ mod n for x below n: the square first (each cross product once, then doubled),
    /// then the reduction, about a quarter fewer multiplications than [`Modulus::mul`]; nearly
    /// all the work of an exponentiation is squaring.
    pub(super) fn square(&self, x: &Limbs<N>) -> Limbs<N> {
        let mut t = [0u64; W];
        for i in 0..N {
            let mut carry = 0;
            for j in i + 1..N {
                (t[i + j], carry) = mac(t[i + j], x[i], x[j], carry);
            }
            t[i + N] = carry;
        }
        // Double the cross products and add the squares of the limbs; x² < R² leaves no carry.
        let (mut shifted_out, mut carry) = (0u64, 0u64);
        for i in 0..N {
            let (low, high) = (t[2 * i], t[2 * i + 1]);
            let doubled_low = low << 1 | shifted_out;
            let doubled_high = high << 1 | low >> 63;
            shifted_out = high >> 63;
            let (square_low, square_high) = mac(0, x[i], x[i], 0);
            (t[2 * i], carry) = add(doubled_low, square_low, carry);
            (t[2 * i + 1], carry) = add(doubled_high, square_high, carry);
        }
        // Montgomery reduction of the W-limb square, one limb at a time; `spill` is the carry
        // out of limb i + N that belongs to limb i + N + 1.
        let mut spill = 0u64;
        for i in 0..N {
            let m = t[i].wrapping_mul(self.n_prime);
            let mut carry = 0;
            for j in 0..N {
                (t[i + j], carry) = mac(t[i + j], m, self.n[j], carry);
            }
            let (sum, carry) = add(t[i + N], carry, spill);
            t[i + N] = sum;
            spill = carry;
        }
        let mut result = [0u64; N];
        result.copy_from_slice(&t[N..]);
        let (difference, borrow) = sub(&result, &self.n);
        if spill != 0 || !borrow {
            difference
        } else {
            result
        }
    }

    /// 2·x mod n for x below n.
    fn double(&self, x: &Limbs<N>) -> Limbs<N> {
        let mut doubled = [0u64; N];
        let mut carry = 0;
        for (d, &limb) in doubled.iter_mut().zip(x) {
            *d = limb << 1 | carry;
            carry = limb >> 63;
        }
        let (difference, borrow) = sub(&doubled, &self.n);
        if carry != 0 || !borrow {
            difference
        } else {
            doubled
        }
    }

    /// base^exponent in Montgomery form, for a base in Montgomery form (sliding window).
    pub(super) fn pow(&self, base: &Limbs<N>, exponent: &Limbs<N>) -> Limbs<N> {
        let bits = bit_length(exponent);
        if bits == 0 {
            return self.one;
        }
        // table[i] = base^(2i+1)
        let mut table = [[0u64; N]; 1 << (WINDOW - 1)];
        table[0] = *base;
        let square = self.square(base);
        for i in 1..table.len() {
            table[i] = self.mul(&table[i - 1], &square);
        }
        let mut x = self.one;
        let mut started = false;
        let mut i = bits;
        while i > 0 {
            if !bit(exponent, i - 1) {
                x = self.square(&x);
                i -= 1;
                continue;
            }
            // The longest window of at most WINDOW bits from bit i-1 down that ends in a one.
            let mut low = i.saturating_sub(WINDOW);
            while !bit(exponent, low) {
                low += 1;
            }
            let mut value = 0usize;
            for position in (low..i).rev() {
                value = value << 1 | usize::from(bit(exponent, position));
                if started {
                    x = self.square(&x);
                }
            }
            x = if started {
                self.mul(&x, &table[value >> 1])
            } else {
                table[value >> 1]
            };
            started = true;
            i = low;
        }
        x
    }

    /// 2^exponent in Montgomery form: a squaring per bit and a doubling (an addition, not a
    /// multiplication) per one bit, cheaper than [`Modulus::pow`] for the base-2 round that
    /// rejects most composites.
    pub(super) fn pow2(&self, exponent: &Limbs<N>) -> Limbs<N> {
        let mut x = self.one;
        for i in (0..bit_length(exponent)).rev() {
            x = self.square(&x);
            if bit(exponent, i) {
                x = self.double(&x);
            }
        }
        x
    }
}

/// acc + a·b + carry as (low, high) limbs; cannot overflow 128 bits.
#[inline(always)]
fn mac(acc: u64, a: u64, b: u64, carry: u64) -> (u64, u64) {
    let wide = u128::from(acc) + u128::from(a) * u128::from(b) + u128::from(carry);
    (wide as u64, (wide >> 64) as u64)
}

/// a + b + carry as (sum, carry); the carry in and out are 0 or 1.
#[inline(always)]
fn add(a: u64, b: u64, carry: u64) -> (u64, u64) {
    let wide = u128::from(a) + u128::from(b) + u128::from(carry);
    (wide as u64, (wide >> 64) as u64)
}

/// a − b and whether it borrowed (a < b).
fn sub<const N: usize>(a: &Limbs<N>, b: &Limbs<N>) -> (Limbs<N>, bool) {
    let mut out = [0u64; N];
    let mut borrow = false;
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        let (d, b1) = x.overflowing_sub(y);
        let (d, b2) = d.overflowing_sub(u64::from(borrow));
        *o = d;
        borrow = b1 || b2;
    }
    (out, borrow)
}

/// −x⁻¹ mod 2^64 for odd x, by Newton's iteration (each step doubles the correct low bits).
fn neg_inverse(x: u64) -> u64 {
    let mut inverse = x; // correct to 3 bits for odd x
    for _ in 0..5 {
        inverse = inverse.wrapping_mul(2u64.wrapping_sub(x.wrapping_mul(inverse)));
    }
    inverse.wrapping_neg()
}

fn bit<const N: usize>(x: &Limbs<N>, index: usize) -> bool {
    x[index / 64] >> (index % 64) & 1 == 1
}

pub(super) fn bit_length<const N: usize>(x: &Limbs<N>) -> usize {
    x.iter()
        .rposition(|&limb| limb != 0)
        .map_or(0, |i| 64 * i + 64 - x[i].leading_zeros() as usize)
}

#[cfg(test)]
mod tests {
    use num_bigint::BigUint;
    use proptest::prelude::*;

    use super::*;

    fn limbs<const N: usize>(x: &BigUint) -> Limbs<N> {
        let mut out = [0; N];
        for (o, d) in out.iter_mut().zip(x.to_u64_digits()) {
            *o = d;
        }
        out
    }

    fn modulus<const N: usize, const W: usize>(n: &BigUint) -> Modulus<N, W> {
        let r_squared = (BigUint::from(1u32) << (128 * N)) % n;
        Modulus::new(limbs(n), limbs(&r_squared))
    }

    fn from_montgomery<const N: usize, const W: usize>(m: &Modulus<N, W>, x: &Limbs<N>) -> BigUint {
        let mut one = [0; N];
        one[0] = 1;
        let digits = m.mul(x, &one);
        BigUint::from_slice(
            &digits
                .iter()
                .flat_map(|&d| [d as u32, (d >> 32) as u32])
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn negated_inverse_clears_the_low_limb() {
        for x in [1u64, 3, 0xffff_ffff_ffff_ffff, 0x1234_5678_9abc_def1] {
            assert_eq!(x.wrapping_mul(neg_inverse(x)), u64::MAX);
        }
    }

    fn odd_modulus(bytes: &[u8], full: bool) -> BigUint {
        let mut n = BigUint::from_bytes_le(bytes);
        if full {
            n.set_bit(8 * bytes.len() as u64 - 1, true);
        }
        n.set_bit(0, true);
        n | BigUint::from(3u32)
    }

    proptest! {
        /// Both exponentiations agree with `num_bigint`, for moduli that fill all limbs (the
        /// carry into the extra limb) and shorter ones.
        #[test]
        fn powers_match_num_bigint(
            n in proptest::collection::vec(any::<u8>(), 128),
            base in proptest::collection::vec(any::<u8>(), 128),
            exponent in proptest::collection::vec(any::<u8>(), 0..128),
            full in any::<bool>(),
        ) {
            let n = odd_modulus(&n, full);
            let m = modulus::<16, 32>(&n);
            let base = BigUint::from_bytes_le(&base) % &n;
            let exponent = BigUint::from_bytes_le(&exponent);
            let x = m.to_montgomery(&limbs(&base));
            prop_assert_eq!(
                from_montgomery(&m, &m.pow(&x, &limbs(&exponent))),
                base.modpow(&exponent, &n)
            );
            prop_assert_eq!(
                from_montgomery(&m, &m.pow2(&limbs(&exponent))),
                BigUint::from(2u32).modpow(&exponent, &n)
            );
        }

        #[test]
        fn products_match_num_bigint(
            n in proptest::collection::vec(any::<u8>(), 64),
            a in proptest::collection::vec(any::<u8>(), 64),
            b in proptest::collection::vec(any::<u8>(), 64),
        ) {
            let n = odd_modulus(&n, true);
            let m = modulus::<8, 16>(&n);
            let (a, b) = (BigUint::from_bytes_le(&a) % &n, BigUint::from_bytes_le(&b) % &n);
            let product = m.mul(&m.to_montgomery(&limbs(&a)), &m.to_montgomery(&limbs(&b)));
            prop_assert_eq!(from_montgomery(&m, &product), &a * &b % &n);
            let square = m.square(&m.to_montgomery(&limbs(&a)));
            prop_assert_eq!(from_montgomery(&m, &square), &a * &a % &n);
            prop_assert_eq!(
                from_montgomery(&m, &m.minus_one()),
                &n - BigUint::from(1u32)
            );
        }
    }
}
