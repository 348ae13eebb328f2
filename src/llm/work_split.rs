//! How a kernel's work items are handed to the thread pool: in chunks that shrink as the work
//! runs out. Large chunks first keep each thread streaming long runs of weight rows; small ones
//! last keep the thread that finishes first from waiting long for the other's last chunk.
//!
//! Why not candle's `execute_chunked`: it hands out fixed chunks of an eighth of a thread's
//! share, so on a decoded token, where each product is over in 30-200 µs, one thread waits for
//! most of a chunk at the end of every product (the 1.5B's decode: 4 products a layer, 28
//! layers). Which thread computes an item does not change what it computes, so the results are
//! the same to the bit whatever the split.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The smallest chunk as a share of the items: 1 / (threads × this).
const SMALLEST_SHARE: usize = 32;

/// Runs `f` over `0..n` on candle's thread pool (the calling thread included), each grab of the
/// shared cursor taking half of an even share of what is left, and no less than the smallest
/// chunk.
pub fn in_shrinking_chunks(n: usize, f: &(dyn Fn(Range<usize>) + Sync)) {
    if n == 0 {
        return;
    }
    let pool = candle_core::utils::barrier_pool();
    let threads = pool.n_workers() + 1;
    // From one of the pool's own threads a second call would wait for itself (candle's
    // `execute_chunked` runs such calls inline too; its flag for them is private, the
    // threads' names are not).
    let on_a_pool_thread = std::thread::current().name().is_some_and(|name| name.starts_with("candle-bp-"));
    if threads == 1 || on_a_pool_thread {
        f(0..n);
        return;
    }
    let smallest = n.div_ceil(threads * SMALLEST_SHARE).max(1);
    let cursor = AtomicUsize::new(0);
    pool.execute(|_| {
        let mut start = cursor.load(Ordering::Relaxed);
        while start < n {
            let take = chunk_at(n - start, threads, smallest);
            match cursor.compare_exchange_weak(start, start + take, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => {
                    f(start..start + take);
                    start = cursor.load(Ordering::Relaxed);
                }
                Err(now) => start = now,
            }
        }
    });
}

/// The chunk taken when `left` items remain: half an even share, at least `smallest`, at most
/// what is left.
fn chunk_at(left: usize, threads: usize, smallest: usize) -> usize {
    left.div_ceil(2 * threads).max(smallest).min(left)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn every_item_runs_once() {
        for n in [0, 1, 2, 7, 64, 560, 10_007] {
            let seen = Mutex::new(vec![0u8; n]);
            in_shrinking_chunks(n, &|r: Range<usize>| {
                let mut seen = seen.lock().expect("no panics while held");
                for i in r {
                    seen[i] += 1;
                }
            });
            assert!(seen.into_inner().expect("not poisoned").iter().all(|&c| c == 1), "n = {n}");
        }
    }

    #[test]
    fn chunks_shrink_to_the_smallest() {
        // 560 items on 2 threads (the 1.5B's gate/up product for one token): 140, 105, 79, ...
        let (n, threads): (usize, usize) = (560, 2);
        let smallest = n.div_ceil(threads * SMALLEST_SHARE);
        let mut left = n;
        let mut chunks = Vec::new();
        while left > 0 {
            let take = chunk_at(left, threads, smallest);
            chunks.push(take);
            left -= take;
        }
        assert_eq!(chunks[0], 140);
        assert!(chunks.windows(2).all(|w| w[1] <= w[0]), "{chunks:?}");
        assert!(*chunks.last().expect("some") <= smallest);
        assert!(chunks.len() < 24, "{chunks:?}");
    }
}
