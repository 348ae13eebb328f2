//! The Q4_K/Q6_K kernel on AVX2 and on AVX-VNNI: the AVX-512 kernel's two shapes (a weight row
//! at a time for decode, panels of weight rows for prompts) with 256-bit registers, so panels
//! are 8 weight rows wide. The two paths differ only in the byte dot product:
//!
//! - AVX-VNNI: `vpdpbusd` sums four unsigned-weight × signed-activation products per 32-bit
//!   lane, `vpdpwssd` scales a lane by its sub-block's integer scale while adding it up, as on
//!   AVX-512.
//! - AVX2: `vpmaddubsw` sums pairs of products into 16 bits (at most 2 · 63 · 128 = 16,128: no
//!   saturation for 4- and 6-bit weights), `vpmaddwd` multiplies the pairs by the sub-block's
//!   scale into 32-bit sums: ggml's AVX2 recipe. Panels first add a whole sub-block's pairs in
//!   16 bits where they fit (see `panel_rows`).
//!
//! The integer sums are exact in both, so the two paths give the same bits. Panels keep one
//! integer per output and super-block (the sub-blocks' sums times their integer scales) and
//! scale it in f32 once, where they used to convert and scale every sub-block's sum (AVX2
//! panels 13–19% faster on Q4_K, 3–9% on Q6_K; docs/runtime.md). `interleaved` runs both
//! shapes on interleaved records.

use super::{Q8KRows, WeightType, PANEL_ROWS, QK_K};
use crate::isa::Isa;
use std::arch::x86_64::*;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::ptr::addr_of_mut;

/// Weight rows per panel: one 32-bit lane each in a 256-bit register.
const PANEL: usize = 8;

/// Activation rows `rows` × weight rows `cols` on `isa` (`Avx2` or `AvxVnni`): a panel where
/// `full_panel` (then `cols` is 8 weight rows), else weight row by weight row.
///
/// # Safety
/// The CPU must support `isa`, which must be `Avx2` or `AvxVnni`. `w` must be valid for reads
/// of `n` weight rows of `a.blocks_per_row` blocks of `ty`; `rows` must lie inside `a`'s rows
/// (at most `PANEL_ROWS` of them for a panel) and `cols` inside `0..n`; `out` must be valid for
/// writes of cells `r * n + c` for those rows and columns, and no other thread may touch them
/// meanwhile.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn tile(
    isa: Isa,
    full_panel: bool,
    ty: WeightType,
    w: *const u8,
    a: &Q8KRows,
    rows: Range<usize>,
    cols: Range<usize>,
    out: *mut f32,
    n: usize,
) {
    let vnni = isa == Isa::AvxVnni;
    match (full_panel, ty, vnni) {
        (true, WeightType::Q4K, true) => panel_tile_q4k_vnni(w, a.blocks_per_row * ty.block_bytes(), a, rows, cols.start, out, n),
        (true, WeightType::Q4K, false) => panel_tile_q4k_avx2(w, a.blocks_per_row * ty.block_bytes(), a, rows, cols.start, out, n),
        (true, WeightType::Q6K, true) => panel_tile_q6k_vnni(w, a.blocks_per_row * ty.block_bytes(), a, rows, cols.start, out, n),
        (true, WeightType::Q6K, false) => panel_tile_q6k_avx2(w, a.blocks_per_row * ty.block_bytes(), a, rows, cols.start, out, n),
        (false, _, true) => rows_tile_vnni(ty, w, a, rows, cols, out, n),
        (false, _, false) => rows_tile_avx2(ty, w, a, rows, cols, out, n),
    }
}

/// One weight super-block, ready to give its 8 vectors of 32 unsigned values in activation
/// order ([`Block::q`]) and per vector the integer scales of its two groups of 16 in the form
/// the dot product takes ([`Block::scale`]; AVX2: 16-bit lanes; VNNI: 32-bit lanes holding the
/// scale in their low 16 bits, the high 16 zero, since `vpdpwssd` multiplies both halves); the
/// f32 super-block scale; the f32 offsets per group of 16 values (multiplied by the
/// activations' scaled sums and subtracted). The vectors are made where they are used: all
/// 16 of them at once fill AVX2's 16 registers, which a decode step's one activation row
/// cannot pay for (a row group makes them once for its 8 rows).
struct Block {
    ty: WeightType,
    at: *const u8,
    /// Q4_K: its 8 scales widened to 16 bits, in both halves; Q6_K: its 16 signed scale bytes
    /// in the low half.
    scales: __m256i,
    d: f32,
    offsets: [__m256; 2],
}

impl Block {
    /// # Safety
    /// The CPU must have AVX2 and F16C; `at` must be valid for reads of one block of `ty`
    /// for as long as the block is used.
    #[inline(always)]
    unsafe fn new(ty: WeightType, at: *const u8) -> Self {
        match ty {
            WeightType::Q4K => q4k_block(at),
            WeightType::Q6K => q6k_block(at),
        }
    }

    /// Vector `t` (0..8) of the unpacked values.
    ///
    /// # Safety
    /// As [`Block::new`].
    #[inline(always)]
    unsafe fn q(&self, t: usize) -> __m256i {
        let (b, low) = (self.at, _mm256_set1_epi8(0x0f));
        match self.ty {
            // Chunk p of the 128 value bytes: values 64p..64p+32 in its low nibbles, the next
            // 32 in its high nibbles.
            WeightType::Q4K => {
                let raw = _mm256_loadu_si256(b.add(16 + 32 * (t / 2)) as *const __m256i);
                let raw = if t.is_multiple_of(2) { raw } else { _mm256_srli_epi16(raw, 4) };
                _mm256_and_si256(raw, low)
            }
            // Value 128h + 32part + l: low 4 bits in byte 64h + 32(part % 2) + l (low nibble
            // for parts 0 and 1), high 2 bits at bit 2·part of byte 128 + 32h + l.
            WeightType::Q6K => {
                let (h, part) = (t / 4, t % 4);
                let bits = _mm256_loadu_si256(b.add(64 * h + 32 * (part % 2)) as *const __m256i);
                let bits = if part < 2 { bits } else { _mm256_srli_epi16(bits, 4) };
                let qh = _mm256_loadu_si256(b.add(128 + 32 * h) as *const __m256i);
                let high = _mm256_and_si256(_mm256_srlv_epi32(qh, _mm256_set1_epi32(2 * part as i32)), _mm256_set1_epi8(0x03));
                _mm256_or_si256(_mm256_and_si256(bits, low), _mm256_slli_epi16(high, 4))
            }
        }
    }

    /// The scales of vector `t` (0..8) in the dot product's form.
    ///
    /// # Safety
    /// As [`Block::new`].
    #[inline(always)]
    unsafe fn scale<const VNNI: bool>(&self, t: usize) -> __m256i {
        match self.ty {
            WeightType::Q4K => {
                let table = if VNNI { &Q4K_SCALE_SPLAT_32 } else { &Q4K_SCALE_SPLAT_16 };
                _mm256_shuffle_epi8(self.scales, _mm256_loadu_si256(table[t].as_ptr() as *const __m256i))
            }
            // Vector t takes scales 2t (its first 16 values) and 2t + 1, each repeated: one
            // byte shuffle and one widening per vector.
            WeightType::Q6K => {
                let table = if VNNI { &SCALE_SHUFFLE_32 } else { &SCALE_SHUFFLE_16 };
                let repeated = _mm_shuffle_epi8(_mm256_castsi256_si128(self.scales), _mm_loadu_si128(table[t].as_ptr() as *const __m128i));
                if VNNI {
                    // 4 + 4 copies, widened to 32-bit lanes with their high 16 bits zero.
                    _mm256_cvtepu16_epi32(_mm_cvtepi8_epi16(repeated))
                } else {
                    _mm256_cvtepi8_epi16(repeated)
                }
            }
        }
    }
}

/// The little-endian f16 at `p`, widened.
///
/// # Safety
/// The CPU must have F16C; `p` must be valid for reads of 2 bytes.
#[inline(always)]
unsafe fn f16_at(p: *const u8) -> f32 {
    let bits = u16::from_le_bytes([*p, *p.add(1)]);
    _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(i32::from(bits))))
}

/// The 16-byte [scales ‖ mins] of a Q4_K block, as ggml's `get_scale_min_k4` unpacks them.
///
/// # Safety
/// `b` must be valid for reads of a Q4_K block's first 16 bytes.
#[inline(always)]
unsafe fn q4k_scales_and_mins(b: *const u8) -> [u8; 16] {
    const M1: u32 = 0x3f3f_3f3f;
    const M2: u32 = 0x0f0f_0f0f;
    const M3: u32 = 0x0303_0303;
    let word = |i: usize| u32::from_le_bytes([*b.add(4 + i), *b.add(5 + i), *b.add(6 + i), *b.add(7 + i)]);
    let (u0, u1, u2) = (word(0), word(4), word(8));
    let words = [u0 & M1, (u2 & M2) | (((u0 >> 6) & M3) << 4), u1 & M1, ((u2 >> 4) & M2) | (((u1 >> 6) & M3) << 4)];
    let mut bytes = [0u8; 16];
    for (chunk, word) in bytes.chunks_exact_mut(4).zip(words) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    bytes
}

/// Q4_K: values `d * scale * q - dmin * min` per sub-block of 32.
///
/// # Safety
/// The CPU must have AVX2 and F16C; `b` must be valid for reads of one Q4_K block (144 bytes).
#[inline(always)]
unsafe fn q4k_block(b: *const u8) -> Block {
    let sm = q4k_scales_and_mins(b);
    let scales = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_loadl_epi64(sm.as_ptr() as *const __m128i)));
    // Each min twice, once per group of 16 values of its sub-block.
    let mins = _mm_loadl_epi64(sm.as_ptr().add(8) as *const __m128i);
    let twice = _mm_unpacklo_epi8(mins, mins);
    let dmin = _mm256_set1_ps(f16_at(b.add(2)));
    let offsets = [
        _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(twice)), dmin),
        _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(twice, 8))), dmin),
    ];
    Block { ty: WeightType::Q4K, at: b, scales, d: f16_at(b), offsets }
}

/// Q6_K: values `d * scale[i / 16] * (q - 32)`, 16 signed scales at byte 192, `d` at 208.
///
/// # Safety
/// The CPU must have AVX2 and F16C; `b` must be valid for reads of one Q6_K block (210 bytes).
#[inline(always)]
unsafe fn q6k_block(b: *const u8) -> Block {
    let bytes = _mm_loadu_si128(b.add(192) as *const __m128i);
    let d = f16_at(b.add(208));
    let d32 = _mm256_set1_ps(32.0 * d);
    let offsets = [
        _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes)), d32),
        _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(bytes, 8))), d32),
    ];
    Block { ty: WeightType::Q6K, at: b, scales: _mm256_castsi128_si256(bytes), d, offsets }
}

/// Byte shuffles for Q6_K's scales: entry t repeats byte 2t `copies` times, then byte
/// 2t + 1 (8 copies for AVX2's 16-bit lanes, 4 for VNNI's 32-bit lanes; later bytes unused).
const fn scale_shuffle(copies: usize) -> [[u8; 16]; 8] {
    let mut table = [[0u8; 16]; 8];
    let mut t = 0;
    while t < 8 {
        let mut i = 0;
        while i < 16 {
            table[t][i] = ((2 * t + i / copies) % 16) as u8;
            i += 1;
        }
        t += 1;
    }
    table
}
static SCALE_SHUFFLE_16: [[u8; 16]; 8] = scale_shuffle(8);

/// Byte shuffles for Q4_K's scales (eight 16-bit values in each half of a register): entry j
/// repeats value j in every 16-bit lane (AVX2), or in the low half of every 32-bit lane with
/// the high half zero (VNNI; a shuffle index with its top bit set writes 0).
const fn q4k_scale_splat(vnni: bool) -> [[u8; 32]; 8] {
    let mut table = [[0u8; 32]; 8];
    let mut j = 0;
    while j < 8 {
        let mut i = 0;
        while i < 32 {
            table[j][i] = match (vnni, i % 4) {
                (true, 2 | 3) => 0x80,
                _ => (2 * j + i % 2) as u8,
            };
            i += 1;
        }
        j += 1;
    }
    table
}
static Q4K_SCALE_SPLAT_16: [[u8; 32]; 8] = q4k_scale_splat(false);
static Q4K_SCALE_SPLAT_32: [[u8; 32]; 8] = q4k_scale_splat(true);
static SCALE_SHUFFLE_32: [[u8; 16]; 8] = scale_shuffle(4);

/// Sum of the 8 lanes.
///
/// # Safety
/// The CPU must have AVX.
#[inline(always)]
unsafe fn hsum(x: __m256) -> f32 {
    let s = _mm_add_ps(_mm256_extractf128_ps(x, 1), _mm256_castps256_ps128(x));
    let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)))
}

/// How far ahead of the weight stream a row prefetches (as on AVX-512).
const PREFETCH: usize = 2048;

/// Weight row at `row` against activation rows `r0 .. r0 + R`, written to `out[r * n + c]`.
///
/// # Safety
/// The CPU must have AVX2, FMA and F16C (and AVX-VNNI where `VNNI`); `row` must be valid for
/// reads of `a.blocks_per_row` blocks of `ty`, activation rows `r0 .. r0 + R` must exist in
/// `a`, and `out` must be valid for writes of cells `(r0 + r) * n + c`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn column<const VNNI: bool, const R: usize>(ty: WeightType, row: *const u8, a: &Q8KRows, r0: usize, c: usize, out: *mut f32, n: usize) {
    let nb = a.blocks_per_row;
    let block_bytes = ty.block_bytes();
    let mut acc = [_mm256_setzero_ps(); R];
    for b in 0..nb {
        let at = row.add(b * block_bytes);
        for line in (0..block_bytes).step_by(64) {
            _mm_prefetch::<_MM_HINT_T0>(at.wrapping_add(PREFETCH + line) as *const i8);
        }
        let w = Block::new(ty, at);
        let dw = _mm256_set1_ps(w.d);
        // A row group makes the block's vectors once for all its rows; one row makes each
        // where it is used. The same integers either way, so the same bits.
        let made: Option<[[__m256i; 8]; 2]> = (R > 1).then(|| [std::array::from_fn(|t| w.q(t)), std::array::from_fn(|t| w.scale::<VNNI>(t))]);
        for (r, acc) in acc.iter_mut().enumerate() {
            let i = (r0 + r) * nb + b;
            let x = a.values.as_ptr().add(i) as *const __m256i;
            let mut sum = _mm256_setzero_si256();
            for t in 0..8 {
                let xt = _mm256_loadu_si256(x.add(t));
                let (q, scale) = match &made {
                    Some([q, scale]) => (q[t], scale[t]),
                    None => (w.q(t), w.scale::<VNNI>(t)),
                };
                sum = if VNNI {
                    _mm256_dpwssd_avx_epi32(sum, _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), q, xt), scale)
                } else {
                    _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(q, xt), scale))
                };
            }
            let d = _mm256_mul_ps(dw, _mm256_set1_ps(*a.scales.get_unchecked(i)));
            *acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), d, *acc);
            let sums = a.sums.as_ptr().add(i) as *const f32;
            *acc = _mm256_fnmadd_ps(w.offsets[0], _mm256_loadu_ps(sums), *acc);
            *acc = _mm256_fnmadd_ps(w.offsets[1], _mm256_loadu_ps(sums.add(8)), *acc);
        }
    }
    for (r, acc) in acc.iter().enumerate() {
        *out.add((r0 + r) * n + c) = hsum(*acc);
    }
}

/// Activation rows `rows` × weight rows `cols`, a group of 8 rows per unpacked block where the
/// group is full, else row by row.
///
/// # Safety
/// As `tile`, with the CPU features of the path.
#[inline(always)]
unsafe fn rows_tile<const VNNI: bool>(ty: WeightType, w: *const u8, a: &Q8KRows, rows: Range<usize>, cols: Range<usize>, out: *mut f32, n: usize) {
    const R: usize = super::ROW_GROUP;
    let row_bytes = a.blocks_per_row * ty.block_bytes();
    for c in cols {
        let row = w.add(c * row_bytes);
        let mut r = rows.start;
        while r < rows.end {
            if r + R <= rows.end {
                column::<VNNI, R>(ty, row, a, r, c, out, n);
                r += R;
            } else {
                column::<VNNI, 1>(ty, row, a, r, c, out, n);
                r += 1;
            }
        }
    }
}

/// `rows_tile` on AVX2.
///
/// # Safety
/// As `tile`; the CPU must have AVX2, FMA and F16C.
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn rows_tile_avx2(ty: WeightType, w: *const u8, a: &Q8KRows, rows: Range<usize>, cols: Range<usize>, out: *mut f32, n: usize) {
    rows_tile::<false>(ty, w, a, rows, cols, out, n)
}

/// `rows_tile` on AVX-VNNI.
///
/// # Safety
/// As `tile`; the CPU must have AVX2, FMA, F16C and AVX-VNNI.
#[target_feature(enable = "avx2,fma,f16c,avxvnni")]
unsafe fn rows_tile_vnni(ty: WeightType, w: *const u8, a: &Q8KRows, rows: Range<usize>, cols: Range<usize>, out: *mut f32, n: usize) {
    rows_tile::<true>(ty, w, a, rows, cols, out, n)
}

/// One super-block of 8 weight rows laid out for the panel product: `q[g]` holds values
/// `4g .. 4g+4` of each row (row `i` in lane `i`); `scale[s][i]` row `i`'s integer scale of
/// sub-block `s` (`S` sub-blocks of `256 / S` values) as the path multiplies integer sums by it
/// ([`scale_lane`]); `d[i]` its super-block scale; `offset[s][i]` its f32 offset of sub-block
/// `s` (multiplied by the activations' scaled sums and subtracted).
struct Panel<const S: usize> {
    q: [__m256i; 64],
    scale: [[i32; PANEL]; S],
    d: [f32; PANEL],
    offset: [[f32; PANEL]; S],
}

/// Pointers to the elements of a [`Panel`] that may be uninitialised: the layouts write every
/// one of them through these (the panels are laid out once per super-block, and zeroing them
/// first cost a `memset` per work item).
struct PanelFields {
    q: *mut __m256i,
    scale: *mut i32,
    d: *mut f32,
    offset: *mut f32,
}

impl PanelFields {
    /// # Safety
    /// `panel` must be valid for writes.
    #[inline(always)]
    unsafe fn of<const S: usize>(panel: *mut Panel<S>) -> Self {
        Self {
            q: addr_of_mut!((*panel).q).cast(),
            scale: addr_of_mut!((*panel).scale).cast(),
            d: addr_of_mut!((*panel).d).cast(),
            offset: addr_of_mut!((*panel).offset).cast(),
        }
    }
}

/// A sub-block's integer scale in the form the path multiplies an integer sum by: AVX2's
/// `vpmaddwd` takes 16-bit pair sums, so the scale sits in both 16-bit halves of the lane;
/// AVX-VNNI's `vpmulld` takes the 32-bit sum `vpdpbusd` leaves, so it is the whole lane (for
/// Q4_K's scales, 0..64, that is also the low 16 bits with a zero high half `vpdpwssd` takes).
#[inline(always)]
fn scale_lane<const VNNI: bool>(scale: i32) -> i32 {
    if VNNI {
        scale
    } else {
        let half = u32::from(scale as i16 as u16);
        (half | (half << 16)) as i32
    }
}

/// Word `k` (bytes `4k .. 4k + 4`) of the 32 bytes at `first + i * row_bytes`, for each of the
/// panel's 8 weight rows `i`: one row per lane. Eight loads and an 8 × 8 transpose of 32-bit
/// words, where eight `vpgatherdd` used to fetch the same words: a gather is slow on AMD Zen
/// (and on Intel since the Downfall microcode), and a perf profile of the AVX2 path on a Zen 4
/// put a fifth of a prompt's time on the instruction after it.
///
/// # Safety
/// The CPU must have AVX2; each `first + i * row_bytes` (i < 8) must be valid for reads of 32
/// bytes.
#[inline(always)]
pub(super) unsafe fn row_words(first: *const u8, row_bytes: usize) -> [__m256i; 8] {
    let r: [__m256i; 8] = std::array::from_fn(|i| _mm256_loadu_si256(first.add(i * row_bytes) as *const __m256i));
    // Pairs of rows interleaved by word, then by pairs of words: lanes 0..4 of `u[k]` hold word
    // k of rows 0..4 from `r`'s low halves (words 0..4) and its lanes 4..8 word k + 4.
    let t: [__m256i; 8] = std::array::from_fn(|j| {
        let (a, b) = (r[2 * (j / 2)], r[2 * (j / 2) + 1]);
        if j % 2 == 0 { _mm256_unpacklo_epi32(a, b) } else { _mm256_unpackhi_epi32(a, b) }
    });
    let u: [__m256i; 8] = std::array::from_fn(|j| {
        // u[0..4] from rows 0..4 (t[0..4]), u[4..8] from rows 4..8 (t[4..8]).
        let base = 4 * (j / 4);
        let (a, b) = (t[base + (j % 4) / 2], t[base + 2 + (j % 4) / 2]);
        if j % 2 == 0 { _mm256_unpacklo_epi64(a, b) } else { _mm256_unpackhi_epi64(a, b) }
    });
    // Word k < 4: the low halves of rows 0..4 and 4..8; word k + 4: the high halves.
    std::array::from_fn(|k| match k {
        0..4 => _mm256_permute2x128_si256::<0x20>(u[k], u[k + 4]),
        _ => _mm256_permute2x128_si256::<0x31>(u[k - 4], u[k]),
    })
}

/// Q4_K: word `t` of the 128 value bytes holds, in its low nibbles, values 64p + 4(t%8) ..
/// +4 (p = t / 8) and in its high nibbles the same 32 places later.
///
/// # Safety
/// The CPU must have AVX2 and F16C; `first` must point at a Q4_K block of which 7 more follow,
/// `row_bytes` apart.
#[inline(always)]
unsafe fn panel_q4k<const VNNI: bool>(first: *const u8, row_bytes: usize, panel: *mut Panel<8>) {
    let low = _mm256_set1_epi8(0x0f);
    let fields = PanelFields::of(panel);
    for p in 0..4 {
        for (k, word) in row_words(first.add(16 + 32 * p), row_bytes).into_iter().enumerate() {
            let g = 16 * p + k;
            fields.q.add(g).write(_mm256_and_si256(word, low));
            fields.q.add(g + 8).write(_mm256_and_si256(_mm256_srli_epi16(word, 4), low));
        }
    }
    for i in 0..PANEL {
        let b = first.add(i * row_bytes);
        let sm = q4k_scales_and_mins(b);
        let dmin = f16_at(b.add(2));
        fields.d.add(i).write(f16_at(b));
        for s in 0..8 {
            fields.scale.add(s * PANEL + i).write(scale_lane::<VNNI>(i32::from(sm[s])));
            fields.offset.add(s * PANEL + i).write(dmin * f32::from(sm[8 + s]));
        }
    }
}

/// Q6_K, laid out as [`Block::q`] reads it.
///
/// # Safety
/// The CPU must have AVX2 and F16C; `first` must point at a Q6_K block of which 7 more follow,
/// `row_bytes` apart.
#[inline(always)]
unsafe fn panel_q6k<const VNNI: bool>(first: *const u8, row_bytes: usize, panel: *mut Panel<16>) {
    let fields = PanelFields::of(panel);
    let (low, three) = (_mm256_set1_epi8(0x0f), _mm256_set1_epi8(0x03));
    for h in 0..2 {
        let highs = row_words(first.add(128 + 32 * h), row_bytes);
        let lows = [row_words(first.add(64 * h), row_bytes), row_words(first.add(64 * h + 32), row_bytes)];
        for (k, high) in highs.into_iter().enumerate() {
            let l = 4 * k;
            for (half, lows) in lows.iter().enumerate() {
                let lo = lows[k];
                for (part, bits) in [(half, _mm256_and_si256(lo, low)), (half + 2, _mm256_and_si256(_mm256_srli_epi16(lo, 4), low))] {
                    let h2 = _mm256_and_si256(_mm256_srlv_epi32(high, _mm256_set1_epi32(2 * part as i32)), three);
                    fields.q.add((128 * h + 32 * part + l) / 4).write(_mm256_or_si256(bits, _mm256_slli_epi16(h2, 4)));
                }
            }
        }
    }
    for i in 0..PANEL {
        let b = first.add(i * row_bytes);
        let d = f16_at(b.add(208));
        fields.d.add(i).write(d);
        for s in 0..16 {
            let sc = *b.add(192 + s) as i8;
            fields.scale.add(s * PANEL + i).write(scale_lane::<VNNI>(i32::from(sc)));
            fields.offset.add(s * PANEL + i).write(32.0 * d * f32::from(sc));
        }
    }
}

/// `acc[r]` += the panel · activation rows `r0 + r`, for `R` rows at a time.
///
/// Each row's super-block sum Σ_s scale_s · Σ q·x is one exact 32-bit integer (at most
/// 16 · 63 · 127 · 128 · 16 for Q6_K, far from 2^31), scaled in f32 once: on AVX2 the byte
/// products' pair sums add up in 16 bits over a whole sub-block before one `vpmaddwd` by its
/// scale (8 groups of 4-bit weights: 8 · 2 · 15 · 127 = 30,480; 6-bit weights only 2 groups,
/// 2 · 2 · 63 · 127 = 32,004), on AVX-VNNI `vpdpbusd` sums a sub-block in 32 bits and
/// `vpmulld` scales it. The two paths therefore give the same bits.
///
/// # Safety
/// The CPU must have AVX2 and FMA (and AVX-VNNI where `VNNI`); activation rows `r0 .. r0 + R`
/// and their block `b` must exist in `a`.
#[inline(always)]
unsafe fn panel_rows<const VNNI: bool, const S: usize, const R: usize>(panel: &Panel<S>, a: &Q8KRows, b: usize, r0: usize, acc: &mut [__m256; R]) {
    let nb = a.blocks_per_row;
    let x: [*const i32; R] = std::array::from_fn(|r| a.values.as_ptr().add((r0 + r) * nb + b) as *const i32);
    let mut total = [_mm256_setzero_si256(); R];
    for s in 0..S {
        let scale = _mm256_loadu_si256(panel.scale[s].as_ptr() as *const __m256i);
        let groups = s * (64 / S)..(s + 1) * (64 / S);
        // One way per path and weight type to add scale_s · Σ q·x exactly (see each).
        match (VNNI, S) {
            (true, 8) => add_scaled_halves_vnni(&panel.q, &x, groups, scale, &mut total),
            (true, _) => add_scaled_whole_vnni(&panel.q, &x, groups, scale, &mut total),
            (false, _) => add_scaled_pairs_avx2(&panel.q, &x, groups, scale, &mut total),
        }
    }
    let d = _mm256_loadu_ps(panel.d.as_ptr());
    let offset: [__m256; S] = std::array::from_fn(|s| _mm256_loadu_ps(panel.offset[s].as_ptr()));
    for (r, (acc, total)) in acc.iter_mut().zip(total).enumerate() {
        add_scaled_row(&offset, d, a, (r0 + r) * nb + b, total, acc);
    }
}

/// `acc` += a row's super-block: its exact integer sum `total` times `d` and the activations'
/// scale, less Σ_s `offset[s]` · the activations' sums of sub-block `s` (of 32 values for
/// `S` = 8, 16 for 16), that in four partial sums: one chain of S fused multiply-adds would be
/// S times their latency long, per row.
///
/// # Safety
/// The CPU must have AVX2 and FMA; block `i` must exist in `a`.
#[inline(always)]
unsafe fn add_scaled_row<const S: usize>(offset: &[__m256; S], d: __m256, a: &Q8KRows, i: usize, total: __m256i, acc: &mut __m256) {
    let sums = a.sums.get_unchecked(i);
    let mut offsets = [_mm256_setzero_ps(); 4];
    for s in 0..S {
        let offset_sum = match S {
            8 => sums[2 * s] + sums[2 * s + 1],
            _ => sums[s],
        };
        offsets[s % 4] = _mm256_fmadd_ps(offset[s], _mm256_set1_ps(offset_sum), offsets[s % 4]);
    }
    let offsets = _mm256_add_ps(_mm256_add_ps(offsets[0], offsets[1]), _mm256_add_ps(offsets[2], offsets[3]));
    let scaled = _mm256_fmsub_ps(_mm256_cvtepi32_ps(total), _mm256_mul_ps(d, _mm256_set1_ps(*a.scales.get_unchecked(i))), offsets);
    *acc = _mm256_add_ps(*acc, scaled);
}

/// Group `g`'s 4 activation values (a 32-bit word) of the block at `x`, in every lane.
///
/// # Safety
/// The CPU must have AVX; `x` must point at a Q8_K block's values and `g < 64`.
#[inline(always)]
unsafe fn activation_word(x: *const i32, g: usize) -> __m256i {
    // Blocks of bytes carry no 4-byte alignment.
    _mm256_set1_epi32(x.add(g).read_unaligned())
}

/// AVX-VNNI, 4-bit weights: `total[r]` += scale · Σ q·x over `groups` (a sub-block of 32
/// values), a half at a time. Half a sub-block (16 values, at most 16 · 15 · 128 = 30,720 in
/// magnitude) fits the low 16 bits of a lane, which `vpdpwssd` multiplies by the scale (the
/// high 16 bits, the sum's sign, meet the scale's zero high half): two instructions per
/// sub-block where `vpmulld` and an addition take three.
///
/// # Safety
/// The CPU must have AVX2 and AVX-VNNI; every `x[r]` must point at a Q8_K block's values and
/// `groups` lie inside `0..64`.
#[inline(always)]
unsafe fn add_scaled_halves_vnni<const R: usize>(q: &[__m256i; 64], x: &[*const i32; R], groups: Range<usize>, scale: __m256i, total: &mut [__m256i; R]) {
    let half = groups.len() / 2;
    for first in groups.step_by(half) {
        let mut sum = [_mm256_setzero_si256(); R];
        for g in first..first + half {
            for (sum, x) in sum.iter_mut().zip(x) {
                *sum = _mm256_dpbusd_avx_epi32(*sum, q[g], activation_word(*x, g));
            }
        }
        for (total, sum) in total.iter_mut().zip(sum) {
            *total = _mm256_dpwssd_avx_epi32(*total, sum, scale);
        }
    }
}

/// AVX-VNNI, 6-bit weights: `total[r]` += scale · Σ q·x over `groups` (a sub-block of 16
/// values, whose sum needs 32 bits), multiplied by `vpmulld`.
///
/// # Safety
/// As `add_scaled_halves_vnni`.
#[inline(always)]
unsafe fn add_scaled_whole_vnni<const R: usize>(q: &[__m256i; 64], x: &[*const i32; R], groups: Range<usize>, scale: __m256i, total: &mut [__m256i; R]) {
    let mut sum = [_mm256_setzero_si256(); R];
    for g in groups {
        for (sum, x) in sum.iter_mut().zip(x) {
            *sum = _mm256_dpbusd_avx_epi32(*sum, q[g], activation_word(*x, g));
        }
    }
    for (total, sum) in total.iter_mut().zip(sum) {
        *total = _mm256_add_epi32(*total, _mm256_mullo_epi32(sum, scale));
    }
}

/// AVX2: `total[r]` += scale · Σ q·x over `groups`. `vpmaddubsw`'s pair sums add up in 16 bits
/// over as many groups of 4 values as fit (4-bit weights: the whole sub-block, 8 groups,
/// 8 · 2 · 15 · 127 = 30,480; 6-bit weights: 2 groups, 2 · 2 · 63 · 127 = 32,004), then one
/// `vpmaddwd` multiplies them by the scale into 32-bit sums.
///
/// # Safety
/// The CPU must have AVX2; every `x[r]` must point at a Q8_K block's values and `groups` lie
/// inside `0..64`.
#[inline(always)]
unsafe fn add_scaled_pairs_avx2<const R: usize>(q: &[__m256i; 64], x: &[*const i32; R], groups: Range<usize>, scale: __m256i, total: &mut [__m256i; R]) {
    let chunk = if groups.len() == 8 { 8 } else { 2 };
    for first in groups.step_by(chunk) {
        let mut pairs: [__m256i; R] = std::array::from_fn(|r| _mm256_maddubs_epi16(q[first], activation_word(x[r], first)));
        for g in first + 1..first + chunk {
            for (pairs, x) in pairs.iter_mut().zip(x) {
                *pairs = _mm256_add_epi16(*pairs, _mm256_maddubs_epi16(q[g], activation_word(*x, g)));
            }
        }
        for (total, pairs) in total.iter_mut().zip(pairs) {
            *total = _mm256_add_epi32(*total, _mm256_madd_epi16(pairs, scale));
        }
    }
}

/// Runs `pass` on the accumulators `acc` (`R` of them, initialised) and stores its results
/// back; returns `R`, the rows done.
///
/// # Safety
/// Every element of `acc` must be initialised.
#[inline(always)]
unsafe fn rows_into<const R: usize>(acc: &mut [MaybeUninit<__m256>], pass: impl FnOnce(&mut [__m256; R])) -> usize {
    let mut part: [__m256; R] = std::array::from_fn(|k| acc[k].assume_init());
    pass(&mut part);
    for (acc, v) in acc.iter_mut().zip(part) {
        acc.write(v);
    }
    R
}

/// Lays out super-block `b` of weight rows `c0 .. c0 + 8` from the file's layout (rows
/// `row_bytes` apart).
///
/// # Safety
/// As `panel_q4k`, for the block at `w + c0 · row_bytes + b · 144`.
#[inline(always)]
unsafe fn file_q4k<const VNNI: bool>(w: *const u8, row_bytes: usize, c0: usize, b: usize, panel: *mut Panel<8>) {
    panel_q4k::<VNNI>(w.add(c0 * row_bytes + b * WeightType::Q4K.block_bytes()), row_bytes, panel)
}

/// As `file_q4k`, for Q6_K.
///
/// # Safety
/// As `panel_q6k`, for the block at `w + c0 · row_bytes + b · 210`.
#[inline(always)]
unsafe fn file_q6k<const VNNI: bool>(w: *const u8, row_bytes: usize, c0: usize, b: usize, panel: *mut Panel<16>) {
    panel_q6k::<VNNI>(w.add(c0 * row_bytes + b * WeightType::Q6K.block_bytes()), row_bytes, panel)
}

macro_rules! panel_tile {
    ($name:ident, $lay:ident, $subs:literal, $vnni:literal, $features:literal) => {
        /// Weight rows `c0 .. c0 + 8` against activation rows `rows` (at most PANEL_ROWS).
        ///
        /// # Safety
        /// As `tile` for a panel, on a CPU with the features enabled here.
        #[target_feature(enable = $features)]
        unsafe fn $name(w: *const u8, row_bytes: usize, a: &Q8KRows, rows: Range<usize>, c0: usize, out: *mut f32, n: usize) {
            const R: usize = 4;
            let nb = a.blocks_per_row;
            let m = rows.len();
            // Neither the accumulators of rows past `m` nor the panel before its first layout
            // are read, so neither is zeroed.
            let mut acc = [MaybeUninit::<__m256>::uninit(); PANEL_ROWS];
            for acc in &mut acc[..m] {
                acc.write(_mm256_setzero_ps());
            }
            let mut panel = MaybeUninit::<Panel<$subs>>::uninit();
            for b in 0..nb {
                $lay::<$vnni>(w, row_bytes, c0, b, panel.as_mut_ptr());
                // SAFETY: the layout above wrote every field.
                let panel = panel.assume_init_ref();
                let mut r = 0;
                while r < m {
                    r += if r + R <= m {
                        rows_into::<R>(&mut acc[r..r + R], |part| panel_rows::<$vnni, $subs, R>(panel, a, b, rows.start + r, part))
                    } else {
                        rows_into::<1>(&mut acc[r..r + 1], |part| panel_rows::<$vnni, $subs, 1>(panel, a, b, rows.start + r, part))
                    };
                }
            }
            for (r, acc) in acc[..m].iter().enumerate() {
                _mm256_storeu_ps(out.add((rows.start + r) * n + c0), acc.assume_init());
            }
        }
    };
}
panel_tile!(panel_tile_q4k_avx2, file_q4k, 8, false, "avx2,fma,f16c");
panel_tile!(panel_tile_q6k_avx2, file_q6k, 16, false, "avx2,fma,f16c");
panel_tile!(panel_tile_q4k_vnni, file_q4k, 8, true, "avx2,fma,f16c,avxvnni");
panel_tile!(panel_tile_q6k_vnni, file_q6k, 16, true, "avx2,fma,f16c,avxvnni");

// After the macros it uses.
mod interleaved;
pub(super) use interleaved::interleaved_tile;

const _: () = assert!(QK_K == 256);

#[cfg(test)]
mod tests {
    use super::*;

    /// The Q4_K scale shuffles give each vector its sub-block's scale in the dot product's
    /// form: in every 16-bit lane for AVX2, and zero-extended into every 32-bit lane for
    /// AVX-VNNI. Checked with AVX2 alone, so a CPU without AVX-VNNI checks that path's form too.
    #[test]
    fn q4k_scale_vectors_take_each_sub_blocks_scale() {
        if !is_x86_feature_detected!("avx2") || !is_x86_feature_detected!("f16c") {
            return;
        }
        let scales: [u8; 8] = [0, 1, 17, 63, 40, 5, 62, 33];
        let mut block = [0u8; 144];
        // 6-bit scales 0..4 in bytes 4..8, 4..8 split over bytes 12..16 (low) and 4..8 (top 2 bits).
        for (j, &sc) in scales.iter().enumerate() {
            if j < 4 {
                block[4 + j] = sc;
            } else {
                block[12 + j - 4] = sc & 0xf;
                block[j] |= (sc >> 4) << 6;
            }
        }
        let check = |vnni: bool| {
            // SAFETY: AVX2 and F16C were detected above; `block` is one Q4_K block.
            let lanes: Vec<[u16; 16]> = unsafe {
                let w = Block::new(WeightType::Q4K, block.as_ptr());
                (0..8)
                    .map(|t| std::mem::transmute::<__m256i, [u16; 16]>(if vnni { w.scale::<true>(t) } else { w.scale::<false>(t) }))
                    .collect()
            };
            for (t, lanes) in lanes.iter().enumerate() {
                let want: [u16; 16] = std::array::from_fn(|l| if vnni && l % 2 == 1 { 0 } else { u16::from(scales[t]) });
                assert_eq!(lanes, &want, "vector {t}, vnni {vnni}");
            }
        };
        check(false);
        check(true);
    }
}
