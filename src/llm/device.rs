//! Choosing where models run: the CPU by default, a CUDA or Metal GPU when the binary was built
//! with the `cuda`/`metal` feature and the user asks for it; on the CPU, which path of our own
//! kernels runs (`ASSAY_CPU`).

use std::str::FromStr;
use std::sync::OnceLock;

use assay_kernels::isa::Isa;

use candle_core::Device;
use serde::{Deserialize, Serialize};

use super::error::{LlmError, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceChoice {
    #[default]
    Cpu,
    Cuda,
    Metal,
}

impl FromStr for DeviceChoice {
    type Err = LlmError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "cpu" => Ok(DeviceChoice::Cpu),
            "cuda" => Ok(DeviceChoice::Cuda),
            "metal" => Ok(DeviceChoice::Metal),
            other => Err(LlmError::Device(format!(
                "unknown device `{other}` (expected cpu, cuda or metal)"
            ))),
        }
    }
}

impl std::fmt::Display for DeviceChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DeviceChoice::Cpu => "cpu",
            DeviceChoice::Cuda => "cuda",
            DeviceChoice::Metal => "metal",
        })
    }
}

/// The candle device for a choice, refusing clearly what this build or machine cannot do.
pub fn open_device(choice: DeviceChoice) -> Result<Device> {
    match choice {
        DeviceChoice::Cpu => {
            check_cpu_features()?;
            super::heap::keep_large_buffers();
            Ok(Device::Cpu)
        }
        DeviceChoice::Cuda => {
            if !candle_core::utils::cuda_is_available() {
                return Err(LlmError::Device(
                    "this binary was built without CUDA support: rebuild with `--features cuda`"
                        .into(),
                ));
            }
            Device::new_cuda(0).map_err(|e| LlmError::Device(format!("CUDA device 0: {e}")))
        }
        DeviceChoice::Metal => {
            if !candle_core::utils::metal_is_available() {
                return Err(LlmError::Device(
                    "this binary was built without Metal support: rebuild with `--features metal`"
                        .into(),
                ));
            }
            Device::new_metal(0).map_err(|e| LlmError::Device(format!("Metal device 0: {e}")))
        }
    }
}

/// The path of our CPU kernels (`assay_kernels`) that model matrices run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuKernels {
    pub isa: Isa,
    /// Named by `ASSAY_CPU` rather than detected: then every matrix our kernels can take runs
    /// on that path, none on candle's own kernels (which would pick their own instructions).
    pub forced: bool,
}

/// The fastest path this CPU runs, or the one `ASSAY_CPU` names (`scalar`, `avx2`, `avxvnni`,
/// `avx512`, `neon`, `dotprod`, `i8mm`; docs/runtime.md), so one machine can measure each path
/// it can run. An unknown name, or a path this CPU lacks, is an error naming both. Read once
/// per process.
pub fn cpu_kernels() -> Result<CpuKernels> {
    static CHOICE: OnceLock<std::result::Result<CpuKernels, String>> = OnceLock::new();
    CHOICE
        .get_or_init(|| {
            let choice = cpu_kernels_named(std::env::var("ASSAY_CPU").ok().as_deref());
            if let Ok(CpuKernels { isa, forced: true }) = choice {
                tracing::info!("CPU kernels: the {isa} path, as ASSAY_CPU says");
            }
            choice
        })
        .clone()
        .map_err(LlmError::Device)
}

/// The path `ASSAY_CPU`'s value names; unset or empty: the fastest this CPU runs.
fn cpu_kernels_named(value: Option<&str>) -> std::result::Result<CpuKernels, String> {
    let Some(name) = value.map(str::trim).filter(|name| !name.is_empty()) else {
        return Ok(CpuKernels { isa: Isa::best(), forced: false });
    };
    let names = Isa::ALL.map(Isa::name).join(", ");
    let isa = Isa::from_name(name)
        .ok_or_else(|| format!("ASSAY_CPU=`{name}` names no kernel path (expected one of {names})"))?;
    if !isa.supported() {
        let here = Isa::all_supported().iter().map(|isa| isa.name()).collect::<Vec<_>>().join(", ");
        return Err(format!("ASSAY_CPU={isa}: this CPU lacks its instructions (it runs {here})"));
    }
    Ok(CpuKernels { isa, forced: true })
}

/// The binary is compiled for x86-64-v3 (AVX2, FMA): on an older CPU it would die of an
/// illegal instruction somewhere deep in a matrix kernel, so say so up front. A bad
/// `ASSAY_CPU` is refused here too, before a model loads.
pub fn check_cpu_features() -> Result<()> {
    cpu_kernels()?;
    #[cfg(target_arch = "x86_64")]
    {
        if !(std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")) {
            return Err(LlmError::Device(
                "this CPU lacks AVX2/FMA, which this build of Assay requires (x86-64-v3)".into(),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assay_cpu_names_a_path_this_cpu_runs_or_is_refused_with_the_choices() {
        let detected = cpu_kernels_named(None).unwrap();
        assert_eq!(detected, CpuKernels { isa: Isa::best(), forced: false });
        assert_eq!(cpu_kernels_named(Some(" ")).unwrap(), detected, "empty counts as unset");
        assert_eq!(cpu_kernels_named(Some("scalar")).unwrap(), CpuKernels { isa: Isa::Scalar, forced: true });
        let unknown = cpu_kernels_named(Some("sse4")).unwrap_err();
        assert!(unknown.contains("`sse4`") && unknown.contains("avx512") && unknown.contains("neon"), "{unknown}");
        // Each architecture lacks the other's paths.
        let foreign = Isa::ALL.into_iter().find(|isa| !isa.supported()).expect("no CPU runs both x86 and ARM paths");
        let lacking = cpu_kernels_named(Some(foreign.name())).unwrap_err();
        assert!(lacking.contains(foreign.name()) && lacking.contains("it runs scalar"), "{lacking}");
    }
}
