//! The feed-forward's input, act(gate) · up, in one pass on the CPU where the gate and up
//! projections are one fused matrix (`assay_kernels::gated_activation`): one read of the
//! product's output and one write, instead of a strided activation pass, a new tensor and a
//! product pass. For SiLU the result is the tensor operations' to the bit; for GELU (tanh form)
//! it is theirs to rounding, its tanh vectorised. Where this does not apply (GPU, another
//! dtype, a layout it does not read) the caller falls back to the tensor operations.

use super::architecture::Activation;
use assay_kernels::gated_activation::{self, GateUpLayout};
use candle_core::{DType, Device, Storage, Tensor};

/// activation(gate) · up for `y`, the fused output `[.., 2 · width]` holding each row's `width`
/// gate values then its `width` up values: `[.., width]`. None where `y` is not one contiguous
/// f32 tensor on the CPU of that width.
pub fn gate_times_up(y: &Tensor, width: usize, activation: Activation) -> candle_core::Result<Option<Tensor>> {
    let Some((&last, _)) = y.dims().split_last() else { return Ok(None) };
    if !matches!(y.device(), Device::Cpu) || y.dtype() != DType::F32 || width == 0 || Some(last) != width.checked_mul(2) {
        return Ok(None);
    }
    let rows = y.elem_count() / last;
    let mut out = vec![0f32; rows * width];
    {
        let (storage, layout) = y.storage_and_layout();
        let (Storage::Cpu(cpu), Some((start, end))) = (&*storage, layout.contiguous_offsets()) else { return Ok(None) };
        let values = &cpu.as_slice::<f32>()?[start..end];
        let pool = candle_core::utils::barrier_pool();
        let parallel = |n: usize, f: &(dyn Fn(std::ops::Range<usize>) + Sync)| pool.execute_chunked(n, f);
        let layout = GateUpLayout { rows, row_stride: last, gate_at: 0, up_at: width, width };
        let kernel = match activation {
            Activation::Silu => gated_activation::silu_times_up,
            Activation::GeluTanh => gated_activation::gelu_tanh_times_up,
        };
        kernel(values, layout, &mut out, &parallel).map_err(candle_core::Error::Msg)?;
    }
    let mut shape = y.dims().to_vec();
    if let Some(last) = shape.last_mut() {
        *last = width;
    }
    Tensor::from_vec(out, shape, &Device::Cpu).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WIDTH: usize = 300;

    /// A fused gate/up output of two rows in a batch of one, values across -10..10, and its
    /// gate and up halves as views.
    fn fused_output() -> (Tensor, Tensor, Tensor) {
        let values: Vec<f32> = (0..2 * 2 * WIDTH).map(|i| ((i * 7919) % 1000) as f32 / 50.0 - 10.0).collect();
        let y = Tensor::from_vec(values, (1, 2, 2 * WIDTH), &Device::Cpu).unwrap();
        let (gate, up) = (y.narrow(2, 0, WIDTH).unwrap(), y.narrow(2, WIDTH, WIDTH).unwrap());
        (y, gate, up)
    }

    /// The one pass equals candle's SiLU then product to the bit, on a fused output of two
    /// rows in a batch of one; and leaves what it does not read to the caller.
    #[test]
    fn equals_the_tensor_operations_to_the_bit() {
        let (y, gate, up) = fused_output();
        let ours = gate_times_up(&y, WIDTH, Activation::Silu).unwrap().expect("a contiguous f32 CPU tensor");
        let theirs = (candle_nn::ops::silu(&gate).unwrap() * up).unwrap();
        assert_eq!(ours.dims(), theirs.dims());
        let bits = |t: &Tensor| t.flatten_all().unwrap().to_vec1::<f32>().unwrap().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&ours), bits(&theirs));
        assert!(gate_times_up(&y, WIDTH + 1, Activation::Silu).unwrap().is_none(), "a width that does not halve the rows");
        assert!(gate_times_up(&y.to_dtype(DType::F16).unwrap(), WIDTH, Activation::Silu).unwrap().is_none(), "f16");
        assert!(gate_times_up(&y.narrow(2, 0, WIDTH).unwrap(), WIDTH / 2, Activation::Silu).unwrap().is_none(), "a strided view");
    }

    /// GELU: candle's `gelu` then the product, to rounding (relative to the input's scale).
    #[test]
    fn gelu_equals_the_tensor_operations_to_rounding() {
        let (y, gate, up) = fused_output();
        let ours = gate_times_up(&y, WIDTH, Activation::GeluTanh).unwrap().expect("a contiguous f32 CPU tensor");
        let theirs = (gate.gelu().unwrap() * &up).unwrap();
        let flat = |t: &Tensor| t.flatten_all().unwrap().to_vec1::<f32>().unwrap();
        let scale: Vec<f32> = flat(&gate).iter().zip(flat(&up)).map(|(g, u)| (1.0 + g.abs()) * (1.0 + u.abs())).collect();
        for (n, ((a, b), s)) in flat(&ours).iter().zip(flat(&theirs)).zip(scale).enumerate() {
            assert!((a - b).abs() <= 2e-6 * s, "value {n}: {a} against candle's {b}");
        }
    }
}
