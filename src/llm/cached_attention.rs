//! Attention over the KV cache on the CPU in one pass per query row
//! (`assay_kernels::causal_attention`): each row reads only the positions it sees, with no f32
//! score matrix, mask tensor or transpose copy, and the softmax's `exp` vectorised. Where it does
//! not apply (a GPU, a batch of several sequences, soft-capped scores, another dtype or a layout
//! it does not read) the caller falls back to the tensor operations.

use super::device::cpu_kernels;
use assay_kernels::causal_attention::{self, AttentionShape, HeadRows};
use candle_core::{DType, Device, Storage, Tensor};

/// The heads' layout of one `[1, heads, rows, head_dim]` tensor: (offset, head stride, row
/// stride). None where its values are not f32 on the CPU with each row contiguous.
fn head_layout(t: &Tensor) -> Option<(usize, usize, usize)> {
    if !matches!(t.device(), Device::Cpu) || t.dtype() != DType::F32 || t.rank() != 4 || t.dim(0).ok()? != 1 {
        return None;
    }
    let (storage, layout) = t.storage_and_layout();
    if !matches!(&*storage, Storage::Cpu(_)) {
        return None;
    }
    match layout.stride() {
        [_, head_stride, row_stride, 1] => Some((layout.start_offset(), *head_stride, *row_stride)),
        _ => None,
    }
}

/// softmax(scale · q kᵀ, causal, within `window`) · v: `q` is `[1, query_heads, seq, head_dim]`
/// at positions `past..past + seq`, `k` and `v` are `[1, kv_heads, past + seq, head_dim]` (views
/// of the cache). Returns `[1, seq, query_heads · head_dim]`, the output projection's input, or
/// None where a tensor is not one this reads (see the module's note).
pub fn causal_attention(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    past: usize,
    window: Option<usize>,
    scale: f64,
) -> candle_core::Result<Option<Tensor>> {
    let (Some(q_at), Some(k_at), Some(v_at)) = (head_layout(q), head_layout(k), head_layout(v)) else {
        return Ok(None);
    };
    let (_, query_heads, seq, head_dim) = q.dims4()?;
    let (_, kv_heads, positions, _) = k.dims4()?;
    if v.dims() != k.dims() || k.dim(3)? != head_dim || positions != past + seq {
        return Ok(None);
    }
    let isa = cpu_kernels().map_err(|e| candle_core::Error::Msg(e.to_string()))?.isa;
    let shape = AttentionShape { query_heads, kv_heads, seq, past, head_dim, window, scale: scale as f32 };
    let mut out = vec![0f32; seq * query_heads * head_dim];
    {
        let (q_storage, _) = q.storage_and_layout();
        let (k_storage, _) = k.storage_and_layout();
        let (v_storage, _) = v.storage_and_layout();
        let (Storage::Cpu(q_cpu), Storage::Cpu(k_cpu), Storage::Cpu(v_cpu)) = (&*q_storage, &*k_storage, &*v_storage) else {
            return Ok(None);
        };
        let rows = |values, (offset, head_stride, row_stride)| HeadRows { values, offset, head_stride, row_stride };
        let (q_rows, k_rows, v_rows) = (
            rows(q_cpu.as_slice::<f32>()?, q_at),
            rows(k_cpu.as_slice::<f32>()?, k_at),
            rows(v_cpu.as_slice::<f32>()?, v_at),
        );
        let pool = candle_core::utils::barrier_pool();
        let parallel = |n: usize, f: &(dyn Fn(std::ops::Range<usize>) + Sync)| pool.execute_chunked(n, f);
        causal_attention::attention(isa, q_rows, k_rows, v_rows, shape, &mut out, &parallel).map_err(candle_core::Error::Msg)?;
    }
    Tensor::from_vec(out, (1, seq, query_heads * head_dim), &Device::Cpu).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tensor operations the model ran before (scaled queries, scores, an additive causal
    /// mask, softmax, values), for query heads sharing KV heads.
    fn by_tensor_operations(q: &Tensor, k: &Tensor, v: &Tensor, past: usize, scale: f64) -> Tensor {
        let (_, heads, seq, d) = q.dims4().unwrap();
        let kv_heads = k.dim(1).unwrap();
        let rep = heads / kv_heads;
        let positions = past + seq;
        let mask: Vec<f32> = (0..rep * seq)
            .flat_map(|r| (0..positions).map(move |j| if j <= past + r % seq { 0.0 } else { f32::NEG_INFINITY }))
            .collect();
        let mask = Tensor::from_vec(mask, (rep * seq, positions), &Device::Cpu).unwrap();
        let q = (q * scale).unwrap().reshape((1, kv_heads, rep * seq, d)).unwrap();
        let att = q.matmul(&k.t().unwrap()).unwrap().broadcast_add(&mask).unwrap();
        let att = candle_nn::ops::softmax_last_dim(&att).unwrap();
        att.matmul(v).unwrap().reshape((1, heads, seq, d)).unwrap().transpose(1, 2).unwrap().reshape((1, seq, heads * d)).unwrap()
    }

    fn ramp(n: usize, seed: usize) -> Vec<f32> {
        (0..n).map(|i| (((i + seed) * 7919) % 997) as f32 / 250.0 - 2.0).collect()
    }

    /// Against the tensor operations on a cache's view (the first positions of a larger
    /// buffer), within f32 rounding; and None for what it does not read.
    #[test]
    fn equals_the_tensor_operations_on_a_cache_view() {
        let (heads, kv_heads, seq, past, d, capacity) = (4, 2, 9, 6, 32, 24);
        let q = Tensor::from_vec(ramp(heads * seq * d, 1), (1, heads, seq, d), &Device::Cpu).unwrap();
        let cache = |seed| Tensor::from_vec(ramp(kv_heads * capacity * d, seed), (1, kv_heads, capacity, d), &Device::Cpu).unwrap();
        let (k, v) = (cache(2).narrow(2, 0, past + seq).unwrap(), cache(3).narrow(2, 0, past + seq).unwrap());
        let scale = 1.0 / (d as f64).sqrt();
        let ours = causal_attention(&q, &k, &v, past, None, scale).unwrap().expect("f32 CPU tensors with contiguous rows");
        let theirs = by_tensor_operations(&q, &k.contiguous().unwrap(), &v.contiguous().unwrap(), past, scale);
        assert_eq!(ours.dims(), theirs.dims());
        let difference = (ours - &theirs).unwrap().abs().unwrap().max_all().unwrap().to_scalar::<f32>().unwrap();
        let size = theirs.abs().unwrap().max_all().unwrap().to_scalar::<f32>().unwrap();
        assert!(difference <= 1e-5 * size, "largest difference {difference} on values up to {size}");
        let wrong_past = causal_attention(&q, &k, &v, past + 1, None, scale).unwrap();
        assert!(wrong_past.is_none(), "a cache that does not hold past + seq positions");
        assert!(causal_attention(&q.to_dtype(DType::F16).unwrap(), &k, &v, past, None, scale).unwrap().is_none(), "f16");
    }
}
