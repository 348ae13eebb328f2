//! CPU matrix kernels of Assay's model runtime. A crate of their own so that the dev profile,
//! which builds the main crate at opt-level 1 for compile time, can build them at opt-level 3
//! like candle's: SIMD code unoptimised is many times slower.

pub mod k_quants;
pub mod q8_0;
