//! The Q4_K/Q6_K kernel in plain Rust: the reference every SIMD path is tested against, and the
//! path on CPUs none of them runs on. The same arithmetic as the SIMD paths (exact integer sums
//! per sub-block, scaled once per super-block, offsets through the activations' sums of 16),
//! so it differs from them only in the order of its few f32 additions.

use super::{Q8KRows, WeightType, QK_K};
use std::ops::Range;

/// One weight super-block unpacked: its 256 unsigned values, the integer scale of each group
/// of 16 values, the f32 super-block scale, and the offset per group of 16 (the weights are
/// `d * scale * q - offset`).
struct Block {
    q: [u8; QK_K],
    scale: [i32; 16],
    d: f32,
    offsets: [f32; 16],
}

fn f16_at(b: &[u8], i: usize) -> f32 {
    half::f16::from_le_bytes([b[i], b[i + 1]]).to_f32()
}

/// Q4_K: `d`, `dmin`, 12 bytes of 6-bit scales and mins (ggml's `get_scale_min_k4`), then 4
/// chunks of 32 bytes whose low nibbles are values 64p..64p+32 and high nibbles the next 32.
fn unpack_q4k(b: &[u8]) -> Block {
    let s = &b[4..16];
    let scale_min = |j: usize| -> (u8, u8) {
        if j < 4 {
            (s[j] & 63, s[j + 4] & 63)
        } else {
            ((s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4), (s[j + 4] >> 4) | ((s[j] >> 6) << 4))
        }
    };
    let (d, dmin) = (f16_at(b, 0), f16_at(b, 2));
    let mut block = Block { q: [0; QK_K], scale: [0; 16], d, offsets: [0.0; 16] };
    for (p, chunk) in b[16..144].chunks_exact(32).enumerate() {
        for (l, byte) in chunk.iter().enumerate() {
            block.q[64 * p + l] = byte & 0xf;
            block.q[64 * p + 32 + l] = byte >> 4;
        }
    }
    for j in 0..8 {
        let (sc, m) = scale_min(j);
        for k in [2 * j, 2 * j + 1] {
            block.scale[k] = i32::from(sc);
            block.offsets[k] = dmin * f32::from(m);
        }
    }
    block
}

/// Q6_K: value 128h + 32part + l has its low 4 bits in byte 64h + 32(part % 2) + l (low nibble
/// for parts 0 and 1) and its high 2 bits at bit 2·part of byte 128 + 32h + l; then 16 signed
/// scales and `d`. Values are stored plus 32.
fn unpack_q6k(b: &[u8]) -> Block {
    let d = f16_at(b, 208);
    let mut block = Block { q: [0; QK_K], scale: [0; 16], d, offsets: [0.0; 16] };
    for (i, q) in block.q.iter_mut().enumerate() {
        let (h, part, l) = (i / 128, i % 128 / 32, i % 32);
        let low = b[64 * h + 32 * (part % 2) + l];
        let low = if part < 2 { low & 0xf } else { low >> 4 };
        *q = low | (((b[128 + 32 * h + l] >> (2 * part)) & 3) << 4);
    }
    for k in 0..16 {
        let sc = b[192 + k] as i8;
        block.scale[k] = i32::from(sc);
        block.offsets[k] = 32.0 * d * f32::from(sc);
    }
    block
}

/// Activation rows `rows` × weight rows `cols` of `w`, each result handed to `store` with its
/// cell `r * n + c`. Panics (slice bounds) where `w` or `a` lack the rows named; the caller
/// checks the sizes first.
pub(super) fn tile(ty: WeightType, w: &[u8], n: usize, a: &Q8KRows, rows: Range<usize>, cols: Range<usize>, store: &mut dyn FnMut(usize, f32)) {
    let (nb, bytes) = (a.blocks_per_row, ty.block_bytes());
    for c in cols {
        let mut acc = vec![0f32; rows.len()];
        for b in 0..nb {
            let at = &w[(c * nb + b) * bytes..][..bytes];
            let block = match ty {
                WeightType::Q4K => unpack_q4k(at),
                WeightType::Q6K => unpack_q6k(at),
            };
            for (acc, r) in acc.iter_mut().zip(rows.clone()) {
                let i = r * nb + b;
                let x = &a.values[i];
                let mut sum = 0i32;
                let mut offset = 0f32;
                for k in 0..16 {
                    let group: i32 = (16 * k..16 * k + 16).map(|j| i32::from(block.q[j]) * i32::from(x[j])).sum();
                    sum += block.scale[k] * group;
                    offset += block.offsets[k] * a.sums[i][k];
                }
                *acc += sum as f32 * (block.d * a.scales[i]) - offset;
            }
        }
        for (acc, r) in acc.into_iter().zip(rows.clone()) {
            store(r * n + c, acc);
        }
    }
}
