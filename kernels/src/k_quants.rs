//! Q4_K and Q6_K matrix products read straight from the weights as the GGUF file stores them,
//! with activations quantized to Q8_K (blocks of 256 signed bytes with one f32 scale).
//!
//! Why our own: candle 0.11 multiplies these types from copies it makes on first use — a tiled
//! copy for its AVX-512/AVX2 kernels (Q4_K 192 bytes per 256 weights against the file's 144;
//! Q6_K 320 against 210) and, on AMX CPUs, a second one for prompts (320 bytes). On the 1.5B
//! model that is several times the file in memory, and a decode step streams the larger tiled
//! copy from memory. Here nothing is copied: weight blocks are unpacked in registers.
//!
//! - Fewer than 8 activation rows (decode): a weight row at a time, prefetched ahead. Per
//!   super-block the sums are exact integers: `vpdpbusd` multiplies the unsigned 4/6-bit
//!   weights by the signed activation bytes (four products per 32-bit lane) and `vpdpwssd`
//!   scales each lane by its sub-block's integer scale while adding it up.
//! - 8 rows or more (prompts): panels. A super-block of 16 weight rows is laid out once, one
//!   32-bit lane per weight row holding 4 of its values, and serves up to 64 activation rows:
//!   each `vpdpbusd` multiplies 4 broadcast activation values by 4 values of all 16 rows, and a
//!   sub-block's integer sums are scaled in f32 once per 16 outputs.
//!
//! In both the weights' offsets (Q4_K's mins, Q6_K's -32) go through the activations' sums of
//! 16, and results equal candle's to float rounding (it sums in another order); the tests check
//! both paths against the plain definition.
//!
//! AVX-512 VNNI only: where a CPU lacks it the caller keeps candle's kernels.

use crate::Parallel;
use std::ops::Range;
use std::sync::OnceLock;

/// Values per super-block.
pub const QK_K: usize = 256;

/// The weight types this kernel reads, with ggml's block layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightType {
    /// f16 d, f16 dmin, 12 bytes of 6-bit scales and mins, 128 bytes of 4-bit values.
    Q4K,
    /// 128 bytes of low 4 bits, 64 of high 2 bits, 16 signed 8-bit scales, f16 d.
    Q6K,
}

impl WeightType {
    /// Bytes per super-block of 256 weights.
    pub fn block_bytes(self) -> usize {
        match self {
            WeightType::Q4K => 144,
            WeightType::Q6K => 210,
        }
    }
}

/// Activation rows in Q8_K: `scales[i]` and `values[i]` make block `i`; row `r` is blocks
/// `r * blocks_per_row ..`. `sums[i][k]` is the scale times the sum of values `16k .. 16k+16`,
/// which the weights' offsets multiply.
#[derive(Debug, Clone, Default)]
pub struct Q8KRows {
    pub rows: usize,
    pub blocks_per_row: usize,
    pub scales: Vec<f32>,
    pub values: Vec<[i8; QK_K]>,
    pub sums: Vec<[f32; 16]>,
}

impl Q8KRows {
    /// `m` rows of `width` values quantized as candle's `BlockQ8K::from_float` does (scale
    /// from the value of largest magnitude, -127/max, rounded), rows spread over `parallel`.
    /// None when the sizes disagree.
    pub fn quantize(x: &[f32], m: usize, width: usize, parallel: Parallel) -> Option<Self> {
        if width % QK_K != 0 || x.len() != m.checked_mul(width)? {
            return None;
        }
        let nb = width / QK_K;
        let blocks = m * nb;
        let mut out = Self {
            rows: m,
            blocks_per_row: nb,
            scales: vec![0.0; blocks],
            values: vec![[0; QK_K]; blocks],
            sums: vec![[0.0; 16]; blocks],
        };
        let (scales, values, sums) =
            (SharedOut(out.scales.as_mut_ptr()), SharedOut(out.values.as_mut_ptr()), SharedOut(out.sums.as_mut_ptr()));
        parallel(blocks, &|range: Range<usize>| {
            for i in range {
                // SAFETY: `i < blocks`, the length of all three vectors; each block index is
                // written by exactly one work item.
                unsafe {
                    quantize_block(&x[i * QK_K..(i + 1) * QK_K], &mut *scales.ptr().add(i), &mut *values.ptr().add(i), &mut *sums.ptr().add(i));
                }
            }
        });
        Some(out)
    }
}

fn quantize_block(xs: &[f32], d: &mut f32, q: &mut [i8; QK_K], sums: &mut [f32; 16]) {
    let (mut max, mut amax) = (0f32, 0f32);
    for &x in xs {
        if amax < x.abs() {
            amax = x.abs();
            max = x;
        }
    }
    if amax == 0.0 {
        return;
    }
    let iscale = -127f32 / max;
    for (q, &x) in q.iter_mut().zip(xs) {
        *q = (iscale * x).round().clamp(-128.0, 127.0) as i8;
    }
    *d = 1.0 / iscale;
    for (sum, group) in sums.iter_mut().zip(q.chunks_exact(16)) {
        *sum = *d * group.iter().map(|v| i32::from(*v)).sum::<i32>() as f32;
    }
}

/// Whether this CPU has the instructions the kernel needs (AVX-512 F/BW/VL/VNNI, F16C).
pub fn available() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512bw")
                && is_x86_feature_detected!("avx512vl")
                && is_x86_feature_detected!("avx512vnni")
                && is_x86_feature_detected!("f16c")
                && is_x86_feature_detected!("fma")
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    })
}

/// Activation rows per work item: one weight block, unpacked once, serves all of them.
const ROW_GROUP: usize = 8;
/// Weight rows per work item.
const COL_BLOCK: usize = 32;

/// `dst[r * rows + c]` = row `r` of `a` · row `c` of the weights `w` (`rows` rows of
/// `a.blocks_per_row` blocks of type `ty`, in the file's bytes).
pub fn matmul(ty: WeightType, w: &[u8], rows: usize, a: &Q8KRows, dst: &mut [f32], parallel: Parallel) -> Result<(), String> {
    let nb = a.blocks_per_row;
    let blocks = a.rows * nb;
    if Some(w.len()) != rows.checked_mul(nb).and_then(|b| b.checked_mul(ty.block_bytes()))
        || a.scales.len() != blocks
        || a.values.len() != blocks
        || a.sums.len() != blocks
        || dst.len() != a.rows * rows
    {
        return Err(format!(
            "{ty:?} matmul: {} bytes for {rows}×{} weights, {}×{} activations, {} outputs",
            w.len(),
            nb * QK_K,
            a.rows,
            nb * QK_K,
            dst.len()
        ));
    }
    if !available() {
        return Err(format!("{ty:?} matmul: this CPU has no AVX-512 VNNI"));
    }
    let out = SharedOut(dst.as_mut_ptr());
    // Prompts: panels of 16 weight rows laid out in registers once per super-block and used
    // by up to 64 activation rows. Fewer rows would not pay for the layout.
    let (group_rows, block_cols, panels) =
        if a.rows >= PANEL_MIN_ROWS { (panel::ROWS, panel::WIDTH, true) } else { (ROW_GROUP, COL_BLOCK, false) };
    crate::for_each_output_tile(parallel, a.rows, rows, group_rows, block_cols, &|r, c| {
        // SAFETY: the CPU's features were checked above; the sizes were checked above, so
        // every block read is inside `w` and `a` and every cell written inside `dst`; work
        // items cover disjoint cells.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            if panels && c.len() == panel::WIDTH {
                x86::panel_tile(ty, w.as_ptr(), a, r, c.start, out.ptr(), rows)
            } else {
                x86::tile(ty, w.as_ptr(), a, r, c, out.ptr(), rows)
            }
        };
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (r, c, &out, panels);
    });
    Ok(())
}

/// Activation rows from which products use panels.
const PANEL_MIN_ROWS: usize = 8;

/// The panel's shape, named where the dispatch can see it on every target.
mod panel {
    /// Weight rows per panel: one 32-bit lane each in a 512-bit register.
    pub const WIDTH: usize = 16;
    /// Activation rows per work item: their sums stay in the item's accumulators.
    pub const ROWS: usize = 64;
}

/// A buffer written by several threads at disjoint places.
#[derive(Clone, Copy)]
struct SharedOut<T>(*mut T);
impl<T> SharedOut<T> {
    // A method, so closures capture the Sync wrapper rather than its raw pointer field.
    fn ptr(&self) -> *mut T {
        self.0
    }
}
// SAFETY: every user writes each element from exactly one work item.
unsafe impl<T> Sync for SharedOut<T> {}
unsafe impl<T> Send for SharedOut<T> {}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Q8KRows, WeightType, QK_K};
    use std::arch::x86_64::*;
    use std::ops::Range;

    /// One weight super-block unpacked: 4 × 64 unsigned values in activation order, per 32-bit
    /// lane of each the integer scale of its sub-block (low 16 bits; high 16 bits zero, as
    /// `vpdpwssd` multiplies both halves), the f32 super-block scale, and the offsets per 16
    /// values in f32 (multiplied by the activations' scaled sums and subtracted).
    struct Block {
        q: [__m512i; 4],
        scale: [__m512i; 4],
        d: f32,
        offsets: __m512,
    }

    #[inline(always)]
    unsafe fn f16_at(p: *const u8) -> f32 {
        let bits = u16::from_le_bytes([*p, *p.add(1)]);
        _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(i32::from(bits))))
    }

    #[inline(always)]
    unsafe fn lanes(idx: &[i32; 16]) -> __m512i {
        _mm512_loadu_si512(idx.as_ptr() as *const _)
    }

    /// Lane tables for `vpermd`: entry `k` of the result gives lane `i` the source lane
    /// `step * k + i / width` (each source lane repeated `width` times).
    const fn repeated_lanes(step: usize, width: usize) -> [[i32; 16]; 4] {
        let mut t = [[0; 16]; 4];
        let mut k = 0;
        while k < 4 {
            let mut i = 0;
            while i < 16 {
                t[k][i] = (step * k + i / width) as i32;
                i += 1;
            }
            k += 1;
        }
        t
    }

    /// Q4_K: values `d * scale * q - dmin * min` per sub-block of 32.
    #[inline(always)]
    unsafe fn unpack_q4k(b: *const u8) -> Block {
        let packed = q4k_scales_and_mins(b);
        // Built in a register: a 16-byte load of the four words just stored would wait for
        // them (a load spanning several stores is not forwarded), costing most of a block's time.
        let packed = _mm_set_epi32(packed[3] as i32, packed[2] as i32, packed[1] as i32, packed[0] as i32);
        // Lanes 0..8: the eight sub-block scales; 8..16: their mins.
        let sm = _mm512_cvtepu8_epi32(packed);
        // Chunk p holds sub-blocks 2p and 2p + 1, 8 lanes each.
        static SCALE_OF: [[i32; 16]; 4] = repeated_lanes(2, 8);
        static MIN_OF: [i32; 16] = [8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15];
        let low = _mm512_set1_epi8(0x0f);
        let mut q = [_mm512_setzero_si512(); 4];
        let mut scale = [_mm512_setzero_si512(); 4];
        for p in 0..4 {
            // Low nibbles are values 64p..64p+32, high nibbles the next 32.
            let raw = _mm512_broadcast_i64x4(_mm256_loadu_si256(b.add(16 + 32 * p) as *const __m256i));
            q[p] = _mm512_and_si512(_mm512_mask_srli_epi16(raw, 0xffff_0000, raw, 4), low);
            scale[p] = _mm512_permutexvar_epi32(lanes(&SCALE_OF[p]), sm);
        }
        let mins = _mm512_cvtepi32_ps(_mm512_permutexvar_epi32(lanes(&MIN_OF), sm));
        Block { q, scale, d: f16_at(b), offsets: _mm512_mul_ps(mins, _mm512_set1_ps(f16_at(b.add(2)))) }
    }

    /// Q6_K: values are `d * scale[i / 16] * (q - 32)` with q from 4 low and 2 high bits.
    #[inline(always)]
    unsafe fn unpack_q6k(b: *const u8) -> Block {
        // Chunk k holds scale groups 4k .. 4k + 4, 4 lanes each.
        static SCALE_OF: [[i32; 16]; 4] = repeated_lanes(4, 4);
        let (low, two) = (_mm512_set1_epi8(0x0f), _mm512_set1_epi8(0x30));
        let mut q = [_mm512_setzero_si512(); 4];
        for h in 0..2 {
            // Low bits of values 128h + 0..64; high bits of 128h + 0..32, shifted by two for
            // the next 32.
            let ql = _mm512_loadu_si512(b.add(64 * h) as *const _);
            let qh = _mm512_broadcast_i64x4(_mm256_loadu_si256(b.add(128 + 32 * h) as *const __m256i));
            let qh = _mm512_mask_srli_epi16(qh, 0xffff_0000, qh, 2);
            q[2 * h] = _mm512_or_si512(_mm512_and_si512(ql, low), _mm512_and_si512(_mm512_slli_epi16(qh, 4), two));
            q[2 * h + 1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), low), _mm512_and_si512(qh, two));
        }
        let bytes = _mm_loadu_si128(b.add(192) as *const __m128i);
        let s = _mm512_cvtepu16_epi32(_mm256_cvtepi8_epi16(bytes));
        let mut scale = [_mm512_setzero_si512(); 4];
        for k in 0..4 {
            scale[k] = _mm512_permutexvar_epi32(lanes(&SCALE_OF[k]), s);
        }
        let d = f16_at(b.add(208));
        let offsets = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes)), _mm512_set1_ps(32.0 * d));
        Block { q, scale, d, offsets }
    }

    const PREFETCH: usize = 2048;

    /// Weight row `c` against activation rows `r0 .. r0 + R`.
    macro_rules! column {
        ($name:ident, $unpack:ident) => {
            #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni,f16c,fma")]
            unsafe fn $name<const R: usize>(row: *const u8, block_bytes: usize, a: &Q8KRows, r0: usize, c: usize, out: *mut f32, n: usize) {
                let nb = a.blocks_per_row;
                let mut acc = [_mm512_setzero_ps(); R];
                for b in 0..nb {
                    let at = row.add(b * block_bytes);
                    for line in (0..block_bytes).step_by(64) {
                        _mm_prefetch::<_MM_HINT_T0>(at.wrapping_add(PREFETCH + line) as *const i8);
                    }
                    let w = $unpack(at);
                    let dw = _mm512_set1_ps(w.d);
                    for r in 0..R {
                        let i = (r0 + r) * nb + b;
                        let x = a.values.as_ptr().add(i) as *const u8;
                        let mut sum = _mm512_setzero_si512();
                        for p in 0..4 {
                            let xp = _mm512_loadu_si512(x.add(64 * p) as *const _);
                            let dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w.q[p], xp);
                            sum = _mm512_dpwssd_epi32(sum, dot, w.scale[p]);
                        }
                        let d = _mm512_mul_ps(dw, _mm512_set1_ps(*a.scales.get_unchecked(i)));
                        acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), d, acc[r]);
                        let sums = _mm512_loadu_ps(a.sums.as_ptr().add(i) as *const f32);
                        acc[r] = _mm512_fnmadd_ps(w.offsets, sums, acc[r]);
                    }
                }
                for r in 0..R {
                    *out.add((r0 + r) * n + c) = _mm512_reduce_add_ps(acc[r]);
                }
            }
        };
    }
    column!(column_q4k, unpack_q4k);
    column!(column_q6k, unpack_q6k);

    /// Activation rows `rows` × weight rows `cols`, a whole row group per unpacked block where
    /// the group is full, else row by row.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni,f16c,fma")]
    pub(super) unsafe fn tile(ty: WeightType, w: *const u8, a: &Q8KRows, rows: Range<usize>, cols: Range<usize>, out: *mut f32, n: usize) {
        const R: usize = super::ROW_GROUP;
        let block_bytes = ty.block_bytes();
        let row_bytes = a.blocks_per_row * block_bytes;
        for c in cols {
            let row = w.add(c * row_bytes);
            let mut r = rows.start;
            while r < rows.end {
                let full = r + R <= rows.end;
                match (ty, full) {
                    (WeightType::Q4K, true) => column_q4k::<R>(row, block_bytes, a, r, c, out, n),
                    (WeightType::Q4K, false) => column_q4k::<1>(row, block_bytes, a, r, c, out, n),
                    (WeightType::Q6K, true) => column_q6k::<R>(row, block_bytes, a, r, c, out, n),
                    (WeightType::Q6K, false) => column_q6k::<1>(row, block_bytes, a, r, c, out, n),
                }
                r += if full { R } else { 1 };
            }
        }
    }


    use super::panel::{ROWS as PANEL_ROWS, WIDTH as PANEL};

    /// The 16-byte [scales ‖ mins] of a Q4_K block, as ggml's `get_scale_min_k4` unpacks them.
    #[inline(always)]
    unsafe fn q4k_scales_and_mins(b: *const u8) -> [u32; 4] {
        const M1: u32 = 0x3f3f_3f3f;
        const M2: u32 = 0x0f0f_0f0f;
        const M3: u32 = 0x0303_0303;
        let word = |i: usize| u32::from_le_bytes([*b.add(4 + i), *b.add(5 + i), *b.add(6 + i), *b.add(7 + i)]);
        let (u0, u1, u2) = (word(0), word(4), word(8));
        [u0 & M1, (u2 & M2) | (((u0 >> 6) & M3) << 4), u1 & M1, ((u2 >> 4) & M2) | (((u1 >> 6) & M3) << 4)]
    }

    /// One super-block of 16 weight rows laid out for the panel product: `q[g]` holds values
    /// `4g .. 4g+4` of each row (row `i` in lane `i`), `scale[s][i]` and `offset[s][i]` the
    /// f32 scale and offset of row `i`'s sub-block `s` (`S` sub-blocks of `256 / S` values).
    struct Panel<const S: usize> {
        q: [__m512i; 64],
        scale: [[f32; PANEL]; S],
        offset: [[f32; PANEL]; S],
    }

    #[inline(always)]
    unsafe fn gather(base: *const u8, rows: __m512i) -> __m512i {
        _mm512_i32gather_epi32::<1>(rows, base as *const _)
    }

    /// Q4_K: word `t` of the 128 value bytes holds, in its low nibbles, values 64p + 4(t%8) ..
    /// +4 (p = t / 8) and in its high nibbles the same 32 places later.
    #[inline(always)]
    unsafe fn panel_q4k(first: *const u8, row_bytes: usize, rows: __m512i, panel: &mut Panel<8>) {
        let low = _mm512_set1_epi8(0x0f);
        for t in 0..32 {
            let word = gather(first.add(16 + 4 * t), rows);
            let g = 16 * (t / 8) + t % 8;
            panel.q[g] = _mm512_and_si512(word, low);
            panel.q[g + 8] = _mm512_and_si512(_mm512_srli_epi16(word, 4), low);
        }
        for i in 0..PANEL {
            let b = first.add(i * row_bytes);
            let sm = q4k_scales_and_mins(b);
            let bytes: [u8; 16] = std::mem::transmute(sm);
            let (d, dmin) = (f16_at(b), f16_at(b.add(2)));
            for s in 0..8 {
                panel.scale[s][i] = d * f32::from(bytes[s]);
                panel.offset[s][i] = dmin * f32::from(bytes[8 + s]);
            }
        }
    }

    /// Q6_K: value 128h + 32part + l has its low 4 bits in byte 64h + 32(part % 2) + l
    /// (low nibble for parts 0 and 1) and its high 2 bits at bit 2·part of byte 128 + 32h + l.
    #[inline(always)]
    unsafe fn panel_q6k(first: *const u8, row_bytes: usize, rows: __m512i, panel: &mut Panel<16>) {
        let (low, three) = (_mm512_set1_epi8(0x0f), _mm512_set1_epi8(0x03));
        for h in 0..2 {
            for l in (0..32).step_by(4) {
                let high = gather(first.add(128 + 32 * h + l), rows);
                for half in 0..2 {
                    let lo = gather(first.add(64 * h + 32 * half + l), rows);
                    for (part, bits) in [(half, _mm512_and_si512(lo, low)), (half + 2, _mm512_and_si512(_mm512_srli_epi16(lo, 4), low))] {
                        let h2 = _mm512_and_si512(_mm512_srlv_epi16(high, _mm512_set1_epi16(2 * part as i16)), three);
                        panel.q[(128 * h + 32 * part + l) / 4] = _mm512_or_si512(bits, _mm512_slli_epi16(h2, 4));
                    }
                }
            }
        }
        for i in 0..PANEL {
            let b = first.add(i * row_bytes);
            let d = f16_at(b.add(208));
            for s in 0..16 {
                let sc = f32::from(*b.add(192 + s) as i8);
                panel.scale[s][i] = d * sc;
                panel.offset[s][i] = 32.0 * d * sc;
            }
        }
    }

    /// `acc[r]` += the panel · activation rows `r0 + r`, for `R` rows at a time.
    #[inline(always)]
    unsafe fn panel_rows<const S: usize, const R: usize>(panel: &Panel<S>, a: &Q8KRows, b: usize, r0: usize, acc: &mut [__m512; R]) {
        let nb = a.blocks_per_row;
        let per = 64 / S;
        for s in 0..S {
            let mut sum = [_mm512_setzero_si512(); R];
            for g in s * per..(s + 1) * per {
                for r in 0..R {
                    let x = (a.values.as_ptr().add((r0 + r) * nb + b) as *const i32).add(g);
                    // Blocks of bytes carry no 4-byte alignment.
                    sum[r] = _mm512_dpbusd_epi32(sum[r], panel.q[g], _mm512_set1_epi32(x.read_unaligned()));
                }
            }
            let scale = _mm512_loadu_ps(panel.scale[s].as_ptr());
            let offset = _mm512_loadu_ps(panel.offset[s].as_ptr());
            for r in 0..R {
                let i = (r0 + r) * nb + b;
                let da = _mm512_set1_ps(*a.scales.get_unchecked(i));
                acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[r]), _mm512_mul_ps(scale, da), acc[r]);
                let sums = a.sums.get_unchecked(i);
                let offset_sum = match S {
                    8 => sums[2 * s] + sums[2 * s + 1],
                    _ => sums[s],
                };
                acc[r] = _mm512_fnmadd_ps(offset, _mm512_set1_ps(offset_sum), acc[r]);
            }
        }
    }

    macro_rules! panel_tile {
        ($name:ident, $unpack:ident, $subs:literal) => {
            /// Weight rows `c0 .. c0 + 16` against activation rows `rows` (at most PANEL_ROWS).
            #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni,f16c,fma")]
            unsafe fn $name(w: *const u8, block_bytes: usize, a: &Q8KRows, rows: Range<usize>, c0: usize, out: *mut f32, n: usize) {
                const R: usize = 4;
                let nb = a.blocks_per_row;
                let row_bytes = nb * block_bytes;
                let stride = _mm512_mullo_epi32(_mm512_set1_epi32(row_bytes as i32), _mm512_loadu_si512(LANE.as_ptr() as *const _));
                let mut acc = [_mm512_setzero_ps(); PANEL_ROWS];
                let mut panel = Panel::<$subs> { q: [_mm512_setzero_si512(); 64], scale: [[0.0; PANEL]; $subs], offset: [[0.0; PANEL]; $subs] };
                let m = rows.len();
                for b in 0..nb {
                    $unpack(w.add(c0 * row_bytes + b * block_bytes), row_bytes, stride, &mut panel);
                    let mut r = 0;
                    while r + R <= m {
                        let mut part = [acc[r], acc[r + 1], acc[r + 2], acc[r + 3]];
                        panel_rows::<$subs, R>(&panel, a, b, rows.start + r, &mut part);
                        acc[r..r + R].copy_from_slice(&part);
                        r += R;
                    }
                    while r < m {
                        let mut part = [acc[r]];
                        panel_rows::<$subs, 1>(&panel, a, b, rows.start + r, &mut part);
                        acc[r] = part[0];
                        r += 1;
                    }
                }
                for r in 0..m {
                    _mm512_storeu_ps(out.add((rows.start + r) * n + c0), acc[r]);
                }
            }
        };
    }
    static LANE: [i32; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
    panel_tile!(panel_tile_q4k, panel_q4k, 8);
    panel_tile!(panel_tile_q6k, panel_q6k, 16);

    /// Activation rows `rows` (at most PANEL_ROWS) × weight rows `c0 .. c0 + 16`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni,f16c,fma")]
    pub(super) unsafe fn panel_tile(ty: WeightType, w: *const u8, a: &Q8KRows, rows: Range<usize>, c0: usize, out: *mut f32, n: usize) {
        match ty {
            WeightType::Q4K => panel_tile_q4k(w, ty.block_bytes(), a, rows, c0, out, n),
            WeightType::Q6K => panel_tile_q6k(w, ty.block_bytes(), a, rows, c0, out, n),
        }
    }

    const _: () = assert!(QK_K == 256);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{pseudo_random_bits, serial};

    fn pseudo_random(n: usize, seed: u32) -> Vec<u8> {
        pseudo_random_bits(n, seed).into_iter().map(|b| (b >> 16) as u8).collect()
    }

    fn f16_bytes(x: f32) -> [u8; 2] {
        half::f16::from_f32(x).to_le_bytes()
    }

    /// Random blocks with small positive super-block scales (random bytes there would make
    /// f16 infinities and NaNs).
    fn random_weights(ty: WeightType, rows: usize, nb: usize, seed: u32) -> Vec<u8> {
        let mut w = pseudo_random(rows * nb * ty.block_bytes(), seed);
        for (i, block) in w.chunks_exact_mut(ty.block_bytes()).enumerate() {
            let d = 0.001 + (i % 7) as f32 * 0.0005;
            match ty {
                WeightType::Q4K => {
                    block[0..2].copy_from_slice(&f16_bytes(d));
                    block[2..4].copy_from_slice(&f16_bytes(d * 0.7));
                }
                WeightType::Q6K => block[208..210].copy_from_slice(&f16_bytes(d)),
            }
        }
        w
    }

    /// The definition, value by value: ggml's dequantization of each block.
    fn dequantize(ty: WeightType, block: &[u8]) -> Vec<f64> {
        let f16 = |i: usize| f64::from(half::f16::from_le_bytes([block[i], block[i + 1]]).to_f32());
        match ty {
            WeightType::Q4K => {
                let (d, dmin, s, qs) = (f16(0), f16(2), &block[4..16], &block[16..144]);
                let scale_min = |j: usize| -> (f64, f64) {
                    if j < 4 {
                        (f64::from(s[j] & 63), f64::from(s[j + 4] & 63))
                    } else {
                        (f64::from((s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4)), f64::from((s[j + 4] >> 4) | ((s[j] >> 6) << 4)))
                    }
                };
                (0..QK_K)
                    .map(|i| {
                        let (chunk, l) = (i / 64, i % 64);
                        let byte = qs[32 * chunk + l % 32];
                        let q = if l < 32 { byte & 0xf } else { byte >> 4 };
                        let (sc, m) = scale_min(i / 32);
                        d * sc * f64::from(q) - dmin * m
                    })
                    .collect()
            }
            WeightType::Q6K => {
                let (ql, qh, sc, d) = (&block[0..128], &block[128..192], &block[192..208], f16(208));
                (0..QK_K)
                    .map(|i| {
                        let (h, j) = (i / 128, i % 128);
                        let (l, part) = (j % 32, j / 32);
                        let low = ql[64 * h + l + 32 * (part % 2)];
                        let low = if part < 2 { low & 0xf } else { low >> 4 };
                        let high = (qh[32 * h + l] >> (2 * part)) & 3;
                        let q = i32::from(low | (high << 4)) - 32;
                        d * f64::from(sc[i / 16] as i8) * f64::from(q)
                    })
                    .collect()
            }
        }
    }

    #[test]
    fn products_match_the_definition() {
        if !available() {
            return;
        }
        let nb = 3;
        let width = nb * QK_K;
        for ty in [WeightType::Q4K, WeightType::Q6K] {
            // 37 weight rows (two panels and 5 more) and 1, 19 or 70 activation rows: one row, and
            // panels with full groups of 4 rows, remainders and two groups of 64.
            let rows = 37;
            let w = random_weights(ty, rows, nb, 7);
            for m in [1, 19, 70] {
                let x: Vec<f32> = pseudo_random(m * width, 3).iter().map(|b| f32::from(*b) / 40.0 - 3.0).collect();
                let a = Q8KRows::quantize(&x, m, width, &serial).unwrap();
                let mut dst = vec![f32::NAN; m * rows];
                matmul(ty, &w, rows, &a, &mut dst, &serial).unwrap();
                for r in 0..m {
                    for c in 0..rows {
                        let want: f64 = (0..nb)
                            .flat_map(|b| {
                                let i = r * nb + b;
                                let values = dequantize(ty, &w[(c * nb + b) * ty.block_bytes()..][..ty.block_bytes()]);
                                let (d, q) = (f64::from(a.scales[i]), a.values[i]);
                                values.into_iter().zip(q).map(move |(v, q)| v * d * f64::from(q))
                            })
                            .sum();
                        let got = f64::from(dst[r * rows + c]);
                        assert!((got - want).abs() < 1e-4 * want.abs().max(1.0), "{ty:?} m={m} ({r},{c}): {got} vs {want}");
                    }
                }
            }
        }
    }

    #[test]
    fn activations_are_quantized_as_candle_does() {
        let mut x = vec![0.0f32; 2 * QK_K];
        x[5] = -2.0;
        x[6] = 1.0;
        x[QK_K + 1] = 0.5;
        let a = Q8KRows::quantize(&x, 1, 2 * QK_K, &serial).unwrap();
        // The value of largest magnitude always becomes -127; the scale takes its sign.
        assert_eq!((a.values[0][5], a.values[0][6], a.scales[0]), (-127, 64, 1.0 / 63.5));
        assert!((a.sums[0][0] - a.scales[0] * -63.0).abs() < 1e-6);
        assert_eq!((a.values[1][1], a.scales[1]), (-127, -0.5 / 127.0));
        assert!(Q8KRows::quantize(&x, 1, 3 * QK_K, &serial).is_none());
        assert!(Q8KRows::quantize(&x[..100], 1, 100, &serial).is_none());
        let zero = Q8KRows::quantize(&[0.0; QK_K], 1, QK_K, &serial).unwrap();
        assert_eq!((zero.scales[0], zero.values[0][0], zero.sums[0][0]), (0.0, 0, 0.0));
    }

    #[test]
    fn sizes_are_checked() {
        let a = Q8KRows::quantize(&[1.0; QK_K], 1, QK_K, &serial).unwrap();
        let w = random_weights(WeightType::Q4K, 2, 1, 1);
        assert!(matmul(WeightType::Q4K, &w, 3, &a, &mut [0.0; 3], &serial).is_err());
        assert!(matmul(WeightType::Q6K, &w, 2, &a, &mut [0.0; 2], &serial).is_err());
        assert!(matmul(WeightType::Q4K, &w, 2, &a, &mut [0.0; 5], &serial).is_err());
    }
}
