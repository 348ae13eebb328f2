//! e^x for x ≤ 0 in plain arithmetic that the compiler vectorises (libm's `expf` is a call per
//! value): the softmax of attention and the tanh of GELU both need it only there.

/// e^x for x ≤ 0 (a softmax score less the row's largest, or -2|z| for tanh), within 2 units
/// in the last place: x = n·ln 2 + r with |r| ≤ ln 2 / 2, e^r by Cephes' degree-6 polynomial,
/// 2^n put in the exponent bits. Below -87.3 (e^x under f32's smallest normal) it gives 0, as a
/// weight there adds nothing to a sum of at least 1 (nor a term to 1 ± e^x). Plain arithmetic
/// and bit moves, so a loop of it vectorises (libm's `expf` does not).
#[inline(always)]
pub(crate) fn exp_of_non_positive(x: f32) -> f32 {
    const LOG2_E: f32 = std::f32::consts::LOG2_E;
    // ln 2 in two parts, the first with few enough bits that n · LN2_HIGH is exact.
    const LN2_HIGH: f32 = 0.693_359_4;
    const LN2_LOW: f32 = -2.121_944_4e-4;
    // Adding then subtracting 1.5 · 2²³ rounds to the nearest whole number (ties to even).
    const ROUNDER: f32 = 12_582_912.0;
    const SMALLEST: f32 = -87.336_55;
    let below = x < SMALLEST;
    let x = x.max(SMALLEST);
    let shifted = x * LOG2_E + ROUNDER;
    let n = shifted - ROUNDER;
    let r = n.mul_add(-LN2_LOW, n.mul_add(-LN2_HIGH, x));
    let mut p = 1.987_569_1e-4f32;
    p = p.mul_add(r, 1.398_199_9e-3);
    p = p.mul_add(r, 8.333_452e-3);
    p = p.mul_add(r, 4.166_579_6e-2);
    p = p.mul_add(r, 1.666_666_5e-1);
    p = p.mul_add(r, 0.5);
    let e_r = p.mul_add(r * r, r) + 1.0;
    // `shifted`'s low mantissa bits hold n (-126 ≤ n ≤ 0 here, so 2^n is a normal number):
    // 2^n's exponent bits from them by integer steps, which vectorise where `as i32` does not.
    const ROUNDER_BITS: u32 = 0x4B40_0000;
    let two_to_n = f32::from_bits(shifted.to_bits().wrapping_sub(ROUNDER_BITS).wrapping_add(127) << 23);
    if below {
        0.0
    } else {
        e_r * two_to_n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vectorisable `exp` against f64's, over the range a softmax gives it.
    #[test]
    fn exp_is_within_two_units_in_the_last_place() {
        let mut x = 0f32;
        while x > -87.0 {
            let ours = exp_of_non_positive(x);
            let exact = (x as f64).exp();
            let ulp = f32::from_bits((exact as f32).to_bits() + 1) as f64 - exact as f32 as f64;
            assert!((ours as f64 - exact).abs() <= 2.0 * ulp, "e^{x}: {ours} against {exact}");
            x -= 0.0137;
        }
        assert_eq!(exp_of_non_positive(0.0), 1.0);
        assert_eq!(exp_of_non_positive(-100.0), 0.0);
        assert_eq!(exp_of_non_positive(f32::NEG_INFINITY), 0.0);
    }
}
