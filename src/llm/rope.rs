//! Rotary position tables: the cos/sin of every position and frequency, with the scalings
//! GGUF files carry — linear, YaRN, per-frequency factors (Llama 3's `rope_freqs`, Phi-3's
//! LongRoPE factors) and an attention factor on cos/sin. The arithmetic follows llama.cpp's
//! rope so logits agree with it (tests/llm_architectures.rs checks that on every scaling).
//!
//! Every scaling is linear in the position, so it reduces to one effective frequency per
//! dimension pair and one magnitude on cos/sin; the tables are built once at load.

use candle_core::{DType, Device, Tensor};

/// YaRN: interpolate the slow frequencies, keep the fast ones, blend between.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Yarn {
    /// The context the model was trained on before scaling.
    pub original_context: usize,
    pub beta_fast: f32,
    pub beta_slow: f32,
    /// 1 blends fully; 0 turns YaRN into linear scaling.
    pub ext_factor: f32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RopeScaling {
    /// Multiplies every angle: 1 / `rope.scaling.factor` for linear and YaRN, else 1.
    pub freq_scale: f32,
    pub yarn: Option<Yarn>,
    /// Per-frequency divisors of the angle, one per dimension pair.
    pub freq_factors: Option<Vec<f32>>,
    /// Multiplies cos and sin (`rope.scaling.attn_factor`; LongRoPE).
    pub attn_factor: f32,
}

impl Default for RopeScaling {
    fn default() -> Self {
        RopeScaling {
            freq_scale: 1.0,
            yarn: None,
            freq_factors: None,
            attn_factor: 1.0,
        }
    }
}

/// `(cos, sin)`, each `[positions, rotary_dims / 2]`.
pub fn rope_tables(
    rotary_dims: usize,
    base: f32,
    positions: usize,
    scaling: &RopeScaling,
    device: &Device,
) -> candle_core::Result<(Tensor, Tensor)> {
    let pairs = rotary_dims / 2;
    if let Some(f) = &scaling.freq_factors {
        if f.len() != pairs {
            candle_core::bail!("{} RoPE frequency factors for {pairs} dimension pairs", f.len());
        }
    }
    let corr = scaling
        .yarn
        .map(|y| yarn_correction_dims(rotary_dims, y, base));
    let mut mscale = scaling.attn_factor;
    if let Some(y) = scaling.yarn {
        if y.ext_factor != 0.0 {
            mscale *= 1.0 + 0.1 * (1.0 / scaling.freq_scale).ln();
        }
    }
    let inv_freq: Vec<f32> = (0..pairs)
        .map(|i| {
            let factor = scaling.freq_factors.as_ref().map_or(1.0, |f| f[i]);
            let extrapolated = 1.0 / base.powf(2.0 * i as f32 / rotary_dims as f32) / factor;
            let scale = match (scaling.yarn, corr) {
                (Some(y), Some((low, high))) if y.ext_factor != 0.0 => {
                    let ramp = (1.0 - ((i as f32 - low) / (high - low).max(0.001)).clamp(0.0, 1.0)) * y.ext_factor;
                    scaling.freq_scale * (1.0 - ramp) + ramp
                }
                _ => scaling.freq_scale,
            };
            extrapolated * scale
        })
        .collect();
    let inv_freq = Tensor::from_vec(inv_freq, (1, pairs), device)?;
    let pos = Tensor::arange(0u32, positions as u32, device)?
        .to_dtype(DType::F32)?
        .reshape((positions, 1))?;
    let angles = pos.broadcast_mul(&inv_freq)?;
    let (cos, sin) = (angles.cos()?, angles.sin()?);
    if mscale == 1.0 {
        Ok((cos, sin))
    } else {
        Ok(((cos * mscale as f64)?, (sin * mscale as f64)?))
    }
}

/// The dimension pairs between which YaRN blends: below `low` frequencies rotate more than
/// `beta_fast` times over the original context (kept), above `high` fewer than `beta_slow`
/// times (interpolated).
fn yarn_correction_dims(rotary_dims: usize, y: Yarn, base: f32) -> (f32, f32) {
    let dim = |rotations: f32| {
        rotary_dims as f32 * (y.original_context as f32 / (rotations * 2.0 * std::f32::consts::PI)).ln()
            / (2.0 * base.ln())
    };
    let low = dim(y.beta_fast).floor().max(0.0);
    let high = dim(y.beta_slow).ceil().min(rotary_dims as f32 - 1.0);
    (low, high)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(scaling: &RopeScaling) -> Vec<Vec<f32>> {
        let (cos, _) = rope_tables(8, 10_000.0, 5, scaling, &Device::Cpu).unwrap();
        cos.to_vec2().unwrap()
    }

    #[test]
    fn linear_scaling_is_the_unscaled_table_at_a_fraction_of_the_position() {
        let plain = table(&RopeScaling::default());
        let linear = table(&RopeScaling {
            freq_scale: 0.5,
            ..Default::default()
        });
        // Position 4 at scale 1/2 rotates as position 2 unscaled.
        for (a, b) in linear[4].iter().zip(&plain[2]) {
            assert!((a - b).abs() < 1e-5, "{a} vs {b}");
        }
    }

    #[test]
    fn yarn_keeps_fast_frequencies_and_interpolates_slow_ones() {
        let scaling = RopeScaling {
            freq_scale: 0.25,
            yarn: Some(Yarn {
                original_context: 64,
                beta_fast: 32.0,
                beta_slow: 1.0,
                ext_factor: 1.0,
            }),
            ..Default::default()
        };
        let mscale = 1.0 + 0.1 * 4f32.ln();
        let (cos, _) = rope_tables(8, 10_000.0, 3, &scaling, &Device::Cpu).unwrap();
        let yarn: Vec<Vec<f32>> = cos.to_vec2().unwrap();
        let plain = table(&RopeScaling::default());
        // The fastest pair is not interpolated: same angle as unscaled, times mscale.
        assert!((yarn[1][0] - plain[1][0] * mscale).abs() < 1e-5);
        // The slowest pair is fully interpolated: a quarter of the angle.
        let slowest = 10_000f32.powf(-6.0 / 8.0) * 0.25;
        assert!((yarn[2][3] - (2.0 * slowest).cos() * mscale).abs() < 1e-5);
    }

    #[test]
    fn wrong_number_of_factors_is_an_error() {
        let scaling = RopeScaling {
            freq_factors: Some(vec![1.0; 3]),
            ..Default::default()
        };
        assert!(rope_tables(8, 10_000.0, 2, &scaling, &Device::Cpu).is_err());
    }
}
