//! How the process's allocator treats freed memory: kept for reuse rather than handed back to
//! the operating system after every tensor.
//!
//! Why: the models allocate a fresh buffer per operation (candle's CPU tensors) and free it
//! soon after. glibc's malloc serves buffers above its mmap threshold with a fresh mapping each
//! time and returns free memory at the top of its heap past 128 KiB, so every such buffer was
//! faulted in page by page again: embedding the sample's 77 chunks spent 13.9 s of 31.4 s in
//! the kernel (docs/retrieval.md). Buffers up to 32 MiB now come from the heap, which keeps up
//! to 256 MiB free before it shrinks. Larger ones (model weights) keep their own mappings, so
//! dropping a model still hands its memory back.

/// Largest request served from the heap: where glibc's own adaptive threshold stops rising.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const HEAP_UP_TO_BYTES: i32 = 32 << 20;
/// Free memory the heap keeps at its top before returning any.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const KEEP_FREE_BYTES: i32 = 256 << 20;

/// Set the allocator up for reuse; call once, first thing in `main`. True when the allocator
/// took both settings (glibc refuses values out of its range); elsewhere than glibc it does
/// nothing and says false (other allocators have their own policies).
pub fn keep_freed_memory_for_reuse() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only changes two of malloc's parameters.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, HEAP_UP_TO_BYTES) == 1 && libc::mallopt(libc::M_TRIM_THRESHOLD, KEEP_FREE_BYTES) == 1
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    false
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    /// This thread's page faults so far.
    fn page_faults() -> i64 {
        // SAFETY: `getrusage` writes the zeroed struct it is given.
        unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_THREAD, &mut usage);
            usage.ru_minflt
        }
    }

    /// A 24 MiB buffer allocated again after one was freed reuses its pages: filling it faults
    /// in almost none of its 6,144 pages, where glibc's defaults unmapped the first buffer and
    /// faulted every page of the second in again (checked: this fails without the call).
    #[test]
    fn a_large_buffer_allocated_again_reuses_the_freed_pages() {
        assert!(super::keep_freed_memory_for_reuse());
        const SIZE: usize = 24 << 20;
        let fill = || std::hint::black_box(vec![1u8; SIZE]);
        drop(fill());
        let before = page_faults();
        drop(fill());
        let faults = page_faults() - before;
        assert!(faults < 512, "{faults} page faults filling the second buffer");
    }
}
