//! The aarch64 byte dot products the ARM paths share. `sdot` and `smmla` are written as inline
//! assembly: Rust's intrinsics for them (`vdotq_s32`, `vmmlaq_s32`) are not stable yet, while
//! runtime detection of the features is. Each function enables the features it needs itself
//! (`#[inline]`, not `always`: the two do not combine), so they compile whatever CPU the build
//! names, and inline into callers that enable as much.

use std::arch::aarch64::*;
use std::arch::asm;

/// `acc` plus, per 32-bit lane, the sum of the four products of that lane's bytes of `a` and
/// `b` (signed): the `sdot` instruction.
///
/// # Safety
/// The CPU must have the dot-product extension (`dotprod`).
#[inline]
#[target_feature(enable = "neon,dotprod")]
pub unsafe fn sdot(mut acc: int32x4_t, a: int8x16_t, b: int8x16_t) -> int32x4_t {
    asm!("sdot {acc:v}.4s, {a:v}.16b, {b:v}.16b", acc = inout(vreg) acc, a = in(vreg) a, b = in(vreg) b, options(pure, nomem, nostack));
    acc
}

/// The same lane sums on plain NEON: products widened to 16 bits, pairs added, then pairs of
/// pairs. Exact where two products fit in 16 bits (|a·b| ≤ 16,383 each: the kernels' weights
/// have at most 7 bits of magnitude beside 8-bit activations).
///
/// # Safety
/// The CPU must have NEON (every aarch64 CPU does).
#[inline]
#[target_feature(enable = "neon")]
pub unsafe fn sdot_neon(acc: int32x4_t, a: int8x16_t, b: int8x16_t) -> int32x4_t {
    let low = vmull_s8(vget_low_s8(a), vget_low_s8(b));
    let high = vmull_high_s8(a, b);
    // Lane i of the result: products 4i .. 4i + 4, as `sdot` groups them.
    vpadalq_s16(acc, vpaddq_s16(low, high))
}

/// `acc` plus the 2 × 2 products of two rows of 8 bytes in `a` (low half row 0, high half
/// row 1) with two rows of 8 bytes in `b`: lanes (a0·b0, a0·b1, a1·b0, a1·b1). The `smmla`
/// instruction.
///
/// # Safety
/// The CPU must have the 8-bit matrix multiply extension (`i8mm`).
#[inline]
#[target_feature(enable = "neon,i8mm")]
pub unsafe fn smmla(mut acc: int32x4_t, a: int8x16_t, b: int8x16_t) -> int32x4_t {
    asm!("smmla {acc:v}.4s, {a:v}.16b, {b:v}.16b", acc = inout(vreg) acc, a = in(vreg) a, b = in(vreg) b, options(pure, nomem, nostack));
    acc
}
