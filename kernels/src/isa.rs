//! The instruction sets the kernels have code for, which of them this CPU offers, and their
//! names (as `ASSAY_CPU` spells them, so one machine can measure every path it can run).

use std::sync::OnceLock;

/// One code path of the kernels. Every kernel has all of them; a path runs only where
/// [`Isa::supported`] says the CPU has its instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Isa {
    /// Plain Rust, on every CPU: the reference the SIMD paths are tested against, and the
    /// fallback where none of them runs.
    Scalar,
    /// x86-64 AVX2, FMA and F16C (Intel from Haswell, AMD from Zen 1).
    Avx2,
    /// AVX2 plus AVX-VNNI's 256-bit byte dot products (Intel 12th generation and later
    /// without AVX-512, AMD Zen 5).
    AvxVnni,
    /// AVX-512 F/BW/VL with VNNI (Intel Xeon from Cascade Lake, AMD Zen 4).
    Avx512Vnni,
    /// aarch64 NEON (every 64-bit ARM CPU).
    Neon,
    /// NEON with the dot-product instructions `sdot` (Apple M1 and later, Cortex-A76 and
    /// later, Graviton 2 and later).
    NeonDotprod,
    /// NEON with dot products and the 8-bit matrix multiply `smmla` (Apple M2 and later,
    /// Graviton 3 and later, Cortex-A510/A710 and later).
    NeonI8mm,
}

impl Isa {
    /// Every path, slowest first within each architecture.
    pub const ALL: [Isa; 7] = [Isa::Scalar, Isa::Avx2, Isa::AvxVnni, Isa::Avx512Vnni, Isa::Neon, Isa::NeonDotprod, Isa::NeonI8mm];

    /// The name `ASSAY_CPU` takes for this path.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Avx2 => "avx2",
            Isa::AvxVnni => "avxvnni",
            Isa::Avx512Vnni => "avx512",
            Isa::Neon => "neon",
            Isa::NeonDotprod => "dotprod",
            Isa::NeonI8mm => "i8mm",
        }
    }

    /// The path called `name` (see [`Isa::name`]), None for an unknown name.
    pub fn from_name(name: &str) -> Option<Isa> {
        Isa::ALL.into_iter().find(|isa| isa.name() == name)
    }

    /// Whether this CPU has every instruction the path uses (cached after the first call).
    pub fn supported(self) -> bool {
        static SUPPORTED: OnceLock<[bool; Isa::ALL.len()]> = OnceLock::new();
        let table = SUPPORTED.get_or_init(|| Isa::ALL.map(detect));
        Isa::ALL.iter().zip(table).any(|(isa, ok)| *isa == self && *ok)
    }

    /// The fastest path this CPU supports (the paths of one architecture exclude the other's).
    pub fn best() -> Isa {
        Isa::ALL.into_iter().rev().find(|isa| isa.supported()).unwrap_or(Isa::Scalar)
    }

    /// The paths this CPU supports, slowest first (always starting with `Scalar`).
    pub fn all_supported() -> Vec<Isa> {
        Isa::ALL.into_iter().filter(|isa| isa.supported()).collect()
    }
}

impl std::fmt::Display for Isa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(target_arch = "x86_64")]
fn detect(isa: Isa) -> bool {
    let avx2 = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") && is_x86_feature_detected!("f16c");
    match isa {
        Isa::Scalar => true,
        Isa::Avx2 => avx2,
        Isa::AvxVnni => avx2 && is_x86_feature_detected!("avxvnni"),
        Isa::Avx512Vnni => {
            avx2 && is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512bw")
                && is_x86_feature_detected!("avx512vl")
                && is_x86_feature_detected!("avx512vnni")
        }
        Isa::Neon | Isa::NeonDotprod | Isa::NeonI8mm => false,
    }
}

#[cfg(target_arch = "aarch64")]
fn detect(isa: Isa) -> bool {
    let dotprod = std::arch::is_aarch64_feature_detected!("dotprod");
    match isa {
        Isa::Scalar | Isa::Neon => true,
        Isa::NeonDotprod => dotprod,
        Isa::NeonI8mm => dotprod && std::arch::is_aarch64_feature_detected!("i8mm"),
        Isa::Avx2 | Isa::AvxVnni | Isa::Avx512Vnni => false,
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn detect(isa: Isa) -> bool {
    isa == Isa::Scalar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_scalar_is_always_there() {
        for isa in Isa::ALL {
            assert_eq!(Isa::from_name(isa.name()), Some(isa));
        }
        assert_eq!(Isa::from_name("avx"), None);
        assert!(Isa::Scalar.supported());
        assert_eq!(Isa::all_supported()[0], Isa::Scalar);
        assert!(Isa::best().supported());
        eprintln!("kernels: this CPU runs the paths {:?}", Isa::all_supported());
    }
}
