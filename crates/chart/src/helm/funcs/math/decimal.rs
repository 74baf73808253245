//! The slice of shopspring/decimal that Sprig's float math (`addf`, `subf`, `mulf`, `divf`)
//! goes through: floats become exact decimals of their shortest round-trip digits, the
//! arithmetic is exact (division rounds half away from zero at 16 places), and the result is
//! the nearest float64.

use num_bigint::BigInt;
use num_traits::{Signed, Zero};

/// Digits after the point that division keeps (shopspring's `DivisionPrecision`).
const DIVISION_PRECISION: i64 = 16;

/// An exact decimal `value × 10^exp`.
#[derive(Clone, Debug)]
pub struct Decimal {
    value: BigInt,
    exp: i64,
}

impl Decimal {
    /// `decimal.NewFromFloat`: the shortest digits that read back as `f`; NaN and infinities
    /// are the panic message Go's template then reports.
    pub fn from_f64(f: f64) -> Result<Decimal, String> {
        if !f.is_finite() {
            let shown = if f.is_nan() {
                "NaN"
            } else if f > 0.0 {
                "+Inf"
            } else {
                "-Inf"
            };
            return Err(format!("Cannot create a Decimal from {shown}"));
        }
        let text = format!("{f:e}");
        let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
        let exp: i64 = exp.parse().unwrap_or(0);
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits = format!("{whole}{fraction}");
        let value: BigInt = digits.parse().unwrap_or_default();
        Ok(Decimal {
            value,
            exp: exp - fraction.len() as i64,
        })
    }

    /// Both values scaled to the smaller exponent.
    fn aligned(&self, other: &Decimal) -> (BigInt, BigInt, i64) {
        let exp = self.exp.min(other.exp);
        (self.scaled_to(exp), other.scaled_to(exp), exp)
    }

    fn scaled_to(&self, exp: i64) -> BigInt {
        &self.value * pow10(self.exp - exp)
    }

    /// `d.Add(d2)`.
    pub fn add(&self, other: &Decimal) -> Decimal {
        let (a, b, exp) = self.aligned(other);
        Decimal { value: a + b, exp }
    }

    /// `d.Sub(d2)`.
    pub fn sub(&self, other: &Decimal) -> Decimal {
        let (a, b, exp) = self.aligned(other);
        Decimal { value: a - b, exp }
    }

    /// `d.Mul(d2)`.
    pub fn mul(&self, other: &Decimal) -> Decimal {
        Decimal {
            value: &self.value * &other.value,
            exp: self.exp + other.exp,
        }
    }

    /// `d.Div(d2)`: the quotient at 16 decimal places, half away from zero.
    pub fn div(&self, other: &Decimal) -> Result<Decimal, String> {
        if other.value.is_zero() {
            return Err("decimal division by zero".to_string());
        }
        let shift = self.exp - other.exp + DIVISION_PRECISION;
        let (num, den) = if shift >= 0 {
            (&self.value * pow10(shift), other.value.clone())
        } else {
            (self.value.clone(), &other.value * pow10(-shift))
        };
        let mut quotient = &num / &den;
        let remainder = &num % &den;
        if remainder.abs() * 2 >= den.abs() {
            if num.is_negative() != den.is_negative() {
                quotient -= 1;
            } else {
                quotient += 1;
            }
        }
        Ok(Decimal {
            value: quotient,
            exp: -DIVISION_PRECISION,
        })
    }

    /// `d.Float64()`: the float64 nearest to the exact value.
    pub fn to_f64(&self) -> f64 {
        format!("{}e{}", self.value, self.exp)
            .parse()
            .unwrap_or(f64::NAN)
    }
}

fn pow10(n: i64) -> BigInt {
    BigInt::from(10u8).pow(u32::try_from(n).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(f: f64) -> Decimal {
        Decimal::from_f64(f).unwrap()
    }

    #[test]
    fn sums_are_exact_in_decimal() {
        assert_eq!(d(0.1).add(&d(0.2)).to_f64(), 0.3);
        assert_eq!(d(3.0).add(&d(1.5)).add(&d(2.2)).to_f64(), 6.7);
        assert_eq!(
            d(1.2).mul(&d(2.4)).mul(&d(10.0)).mul(&d(4.0)).to_f64(),
            115.2
        );
        assert_eq!(d(4.5).sub(&d(3.0)).sub(&d(1.0)).to_f64(), 0.5);
    }

    #[test]
    fn division_rounds_at_sixteen_places() {
        assert_eq!(
            d(5.0).div(&d(4.0)).unwrap().div(&d(2.0)).unwrap().to_f64(),
            0.625
        );
        assert_eq!(d(1.0).div(&d(3.0)).unwrap().to_f64(), 0.3333333333333333);
        assert_eq!(d(2.0).div(&d(3.0)).unwrap().to_f64(), 0.6666666666666667);
        assert_eq!(d(-2.0).div(&d(3.0)).unwrap().to_f64(), -0.6666666666666667);
        assert!(d(1.0).div(&d(0.0)).is_err());
    }

    #[test]
    fn non_finite_floats_are_refused() {
        assert_eq!(
            Decimal::from_f64(f64::NAN).unwrap_err(),
            "Cannot create a Decimal from NaN"
        );
        assert!(Decimal::from_f64(f64::INFINITY).is_err());
    }
}
