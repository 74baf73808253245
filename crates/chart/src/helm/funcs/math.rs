//! Sprig's math: integer functions that cast every argument with `cast.ToInt64` and return
//! `int64` (wrapping on overflow, as Go does), float functions that go through exact decimals
//! (`addf`, `subf`, `mulf`, `divf`) or plain float64 (`maxf`, `minf`, `floor`, `ceil`,
//! `round`), and `randInt`.

mod decimal;

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

use self::decimal::Decimal;
use super::conversion::{to_float64, to_int64};
use super::{FuncError, FuncMap, FuncResult, args};
use crate::engine::value::Value;

/// Registers the math functions.
pub fn install(funcs: &mut FuncMap) {
    funcs.add("add", |a: &[Value]| {
        Ok(Value::Int64(
            a.iter().fold(0i64, |sum, v| sum.wrapping_add(to_int64(v))),
        ))
    });
    funcs.add("add1", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::Int64(to_int64(&a[0]).wrapping_add(1)))
    });
    funcs.add("sub", |a: &[Value]| {
        args::count(a, 2)?;
        Ok(Value::Int64(to_int64(&a[0]).wrapping_sub(to_int64(&a[1]))))
    });
    funcs.add("mul", |a: &[Value]| {
        args::at_least(a, 1)?;
        Ok(Value::Int64(
            a[1..].iter().fold(to_int64(&a[0]), |product, v| {
                product.wrapping_mul(to_int64(v))
            }),
        ))
    });
    funcs.add("div", |a: &[Value]| {
        args::count(a, 2)?;
        let divisor = nonzero(to_int64(&a[1]))?;
        Ok(Value::Int64(to_int64(&a[0]).wrapping_div(divisor)))
    });
    funcs.add("mod", |a: &[Value]| {
        args::count(a, 2)?;
        let divisor = nonzero(to_int64(&a[1]))?;
        Ok(Value::Int64(to_int64(&a[0]).wrapping_rem(divisor)))
    });
    for name in ["max", "biggest"] {
        funcs.add(name, |a: &[Value]| {
            args::at_least(a, 1)?;
            Ok(Value::Int64(a.iter().map(to_int64).max().unwrap_or(0)))
        });
    }
    funcs.add("min", |a: &[Value]| {
        args::at_least(a, 1)?;
        Ok(Value::Int64(a.iter().map(to_int64).min().unwrap_or(0)))
    });
    funcs.add("maxf", |a: &[Value]| {
        args::at_least(a, 1)?;
        let first = to_float64(&a[0]);
        Ok(Value::Float(
            a[1..].iter().map(to_float64).fold(first, go_max),
        ))
    });
    funcs.add("minf", |a: &[Value]| {
        args::at_least(a, 1)?;
        let first = to_float64(&a[0]);
        Ok(Value::Float(
            a[1..].iter().map(to_float64).fold(first, go_min),
        ))
    });
    funcs.add("addf", |a: &[Value]| {
        decimal_op(&Value::Float(0.0), a, |x, y| Ok(x.add(y)))
    });
    funcs.add("add1f", |a: &[Value]| {
        args::count(a, 1)?;
        decimal_op(&a[0], &[Value::Int(1)], |x, y| Ok(x.add(y)))
    });
    funcs.add("subf", |a: &[Value]| {
        args::at_least(a, 1)?;
        decimal_op(&a[0], &a[1..], |x, y| Ok(x.sub(y)))
    });
    funcs.add("mulf", |a: &[Value]| {
        args::at_least(a, 1)?;
        decimal_op(&a[0], &a[1..], |x, y| Ok(x.mul(y)))
    });
    funcs.add("divf", |a: &[Value]| {
        args::at_least(a, 1)?;
        decimal_op(&a[0], &a[1..], |x, y| x.div(y))
    });
    funcs.add("floor", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::Float(to_float64(&a[0]).floor()))
    });
    funcs.add("ceil", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::Float(to_float64(&a[0]).ceil()))
    });
    funcs.add("round", round);
    funcs.add("randInt", |a: &[Value]| {
        args::count(a, 2)?;
        let (min, max) = (args::int(a, 0)?, args::int(a, 1)?);
        let span = max.wrapping_sub(min);
        if span <= 0 {
            return Err(FuncError::failed("invalid argument to Intn"));
        }
        Ok(Value::Int(random_below(span as u64) as i64 + min))
    });
}

fn nonzero(divisor: i64) -> Result<i64, FuncError> {
    if divisor == 0 {
        return Err(FuncError::failed("runtime error: integer divide by zero"));
    }
    Ok(divisor)
}

/// Sprig's `execDecimalOp`: folds the arguments into the first as exact decimals.
fn decimal_op(
    first: &Value,
    rest: &[Value],
    op: impl Fn(&Decimal, &Decimal) -> Result<Decimal, String>,
) -> FuncResult {
    let mut acc = Decimal::from_f64(to_float64(first)).map_err(FuncError::failed)?;
    for v in rest {
        let next = Decimal::from_f64(to_float64(v)).map_err(FuncError::failed)?;
        acc = op(&acc, &next).map_err(FuncError::failed)?;
    }
    Ok(Value::Float(acc.to_f64()))
}

/// A `float64` parameter; an integer template literal converts to it, as Go's constants do.
fn float_param(a: &[Value], index: usize) -> Result<f64, FuncError> {
    match a.get(index) {
        Some(Value::Int(i)) => Ok(*i as f64),
        _ => args::float64(a, index),
    }
}

/// Sprig's `round NUMBER PLACES [ROUND_ON]`: rounds up from `ROUND_ON` (default .5) of the
/// last place.
fn round(a: &[Value]) -> FuncResult {
    args::at_least(a, 2)?;
    let places = args::int(a, 1)? as f64;
    let round_on = if a.len() > 2 { float_param(a, 2)? } else { 0.5 };
    let value = to_float64(&a[0]);
    let pow = 10f64.powf(places);
    let digit = pow * value;
    let fraction = digit.fract();
    let rounded = if fraction >= round_on {
        digit.ceil()
    } else {
        digit.floor()
    };
    Ok(Value::Float(rounded / pow))
}

/// Go's `math.Max`: infinity wins, then NaN, and +0 beats -0.
fn go_max(x: f64, y: f64) -> f64 {
    if x == f64::INFINITY || y == f64::INFINITY {
        return f64::INFINITY;
    }
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if x == 0.0 && y == 0.0 {
        return if x.is_sign_negative() { y } else { x };
    }
    if x > y { x } else { y }
}

/// Go's `math.Min`: -infinity wins, then NaN, and -0 beats +0.
fn go_min(x: f64, y: f64) -> f64 {
    if x == f64::NEG_INFINITY || y == f64::NEG_INFINITY {
        return f64::NEG_INFINITY;
    }
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if x == 0.0 && y == 0.0 {
        return if x.is_sign_negative() { x } else { y };
    }
    if x < y { x } else { y }
}

/// A random number in `0..n` from the process's randomly keyed hasher (no seeding needed,
/// as Go's `math/rand` top-level functions need none since Go 1.20).
fn random_below(n: u64) -> u64 {
    let random = RandomState::new().hash_one(std::time::SystemTime::now());
    ((u128::from(random) * u128::from(n)) >> 64) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_max_and_min_treat_nan_and_zero_signs_as_go() {
        assert!(go_max(1.0, f64::NAN).is_nan());
        assert_eq!(go_max(f64::NAN, f64::INFINITY), f64::INFINITY);
        assert!(go_max(-0.0, 0.0).is_sign_positive());
        assert!(go_min(-0.0, 0.0).is_sign_negative());
        assert_eq!(go_min(3.0, 1.4), 1.4);
    }

    #[test]
    fn round_follows_sprig() {
        let r = |v: f64, p: i64| {
            round(&[Value::Float(v), Value::Int(p)])
                .unwrap()
                .to_go_string()
        };
        assert_eq!(r(123.5555, 3), "123.556");
        assert_eq!(r(123.49999999, 0), "123");
        assert_eq!(
            round(&[Value::Float(123.233), Value::Int(2), Value::Float(0.3)])
                .unwrap()
                .to_go_string(),
            "123.24"
        );
    }

    #[test]
    fn rand_int_stays_in_range() {
        for _ in 0..100 {
            assert!(random_below(7) < 7);
        }
    }
}
