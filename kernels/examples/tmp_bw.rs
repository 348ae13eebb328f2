use assay_kernels::isa::Isa;
use assay_kernels::k_quants::{self, InterleavedKQuant, Q8KRows, WeightType};
use std::time::Instant;
fn main() {
    let width = 1536;
    let x: Vec<f32> = (0..width).map(|i| ((i * 37 % 101) as f32 / 50.0) - 1.0).collect();
    let inline = |n: usize, f: &(dyn Fn(std::ops::Range<usize>) + Sync)| f(0..n);
    let two = |n: usize, f: &(dyn Fn(std::ops::Range<usize>) + Sync)| {
        std::thread::scope(|s| { s.spawn(|| f(0..n / 2)); f(n / 2..n); });
    };
    let a = Q8KRows::quantize(&x, 1, width, &inline).unwrap();
    for ty in [WeightType::Q4K, WeightType::Q6K] {
    for rows in [512usize, 131072] {
        let bytes = rows * width / 256 * ty.block_bytes();
        let mut w: Vec<u8> = vec![0u8; bytes];
        for (i, b) in w.iter_mut().enumerate() { *b = (i * 131 % 251) as u8 & 0x3f; }
        let il = InterleavedKQuant::from_file_bytes(ty, &w, rows, width / 256).unwrap();
        let mut dst = vec![0f32; rows];
        let reps = (400_000_000 / bytes).max(3);
        for threads in [1, 2] {
        for kind in ["file", "interleaved"] {
        let p: assay_kernels::Parallel = if threads == 1 { &inline } else { &two };
        let mut best = f64::MAX;
        for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..reps { if kind == "file" { k_quants::matmul(Isa::Avx512Vnni, ty, &w, rows, &a, &mut dst, p).unwrap(); } else { il.matmul(Isa::Avx512Vnni, &a, &mut dst, p).unwrap(); } }
        best = best.min(t.elapsed().as_secs_f64());
        }
        println!("{ty:?} {kind} rows {rows} ({} KB) threads {threads}: {:.1} GB/s", bytes / 1024, (bytes * reps) as f64 / best / 1e9);
        }}
    }}
}
