//! Keeping a forward pass's large buffers in the process heap between passes.
//!
//! A prompt's forward pass allocates and frees tens of megabytes per layer (activations,
//! attention scores, kernel outputs: a 512-token chunk of the 1.5B model's `ffn_down` input is
//! 18 MiB). glibc hands such sizes out as fresh memory maps once they pass its mmap threshold
//! and returns freed heap tops to the system past its trim threshold, so every pass paid for
//! mapping, zeroing and unmapping the same pages again: loading the 1.5B model and reading
//! four 512-token prompts took 7.6 processor-seconds in the kernel out of 51.5, and 1.5 out of
//! 44.4 with both thresholds raised (docs/runtime.md), which keeps those pages in the process
//! for the next buffer.

/// The largest mmap threshold glibc accepts (half its 64 MiB arena heap on 64-bit targets);
/// a larger value is refused and the threshold stays where it was.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD_BYTES: libc::c_int = 32 << 20;

/// Free memory at the heap's top kept for later buffers rather than returned to the system:
/// a 512-token pass of the default models frees at most about this much between layers.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_THRESHOLD_BYTES: libc::c_int = 256 << 20;

/// Raise glibc's mmap and trim thresholds, once per process. Setting either also ends glibc's
/// own adjustment of the mmap threshold (which would otherwise stay at the size of the largest
/// buffer freed so far, and so still map the first large buffers of every new shape).
/// Elsewhere (other C libraries, other systems) this does nothing.
pub fn keep_large_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static DONE: std::sync::Once = std::sync::Once::new();
        DONE.call_once(|| {
            // SAFETY: mallopt only changes allocator parameters; it returns 0 for a value it
            // refuses, which leaves glibc's defaults in place (slower, not wrong).
            let accepted = unsafe {
                libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1
                    && libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES) == 1
            };
            if !accepted {
                tracing::debug!("glibc refused the heap thresholds; large buffers stay on fresh memory maps");
            }
        });
    }
}
