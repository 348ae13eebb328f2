//! The memory one render may use, and how the size of a template value is measured against it.
//! Two limits: one value (a string, a list) may not pass [`MAX_VALUE_BYTES`], and everything a
//! render builds — each value a step produces and each byte it writes, captured or not — may not
//! pass [`MAX_RENDER_BYTES`] in all. The second is what stops a loop that keeps what it builds
//! (a list grown one large string at a time, a chain of dicts) where each step alone is small.

use minijinja::value::{Value, ValueKind};
use minijinja::{Error, ErrorKind};
use std::fmt::{self, Write};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes one value may hold: the rendered-text cap, since no larger value can be emitted.
pub const MAX_VALUE_BYTES: usize = super::MAX_RENDERED_BYTES;

/// Bytes one render may build in all. Real prompts and chat templates build a small multiple of
/// their output (a few KiB to a few MiB); this leaves room for that and stops a bomb early.
pub const MAX_RENDER_BYTES: usize = 64 << 20;

/// What one list or map entry is counted as: a minijinja `Value` (24 bytes) plus the share of
/// its container's allocation and bookkeeping, rounded up.
pub const ITEM_BYTES: usize = 64;

/// Entries one list or map may hold.
pub const MAX_ITEMS: usize = MAX_VALUE_BYTES / ITEM_BYTES;

/// The bytes still free for one render, shared by every hook of that render.
#[derive(Debug)]
pub struct RenderBudget {
    remaining: AtomicUsize,
    /// Text written so far, into the output or into a `{% set %}` block or macro.
    written: AtomicUsize,
}

impl RenderBudget {
    pub fn new() -> RenderBudget {
        RenderBudget { remaining: AtomicUsize::new(MAX_RENDER_BYTES), written: AtomicUsize::new(0) }
    }

    /// Count `bytes` of text written: an error once the render has written more than the
    /// rendered-text cap, captured or not (a prompt is far smaller; this stops a loop that
    /// writes without end as early as the output cap would).
    pub fn write(&self, bytes: usize) -> Result<(), Error> {
        let before = self.written.fetch_add(bytes, Ordering::Relaxed);
        if before.saturating_add(bytes) > super::MAX_RENDERED_BYTES {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!(
                    "the rendered text passed {} MiB; stopped (a loop that writes too much?)",
                    super::MAX_RENDERED_BYTES >> 20
                ),
            ));
        }
        self.charge("writing a value", bytes)
    }

    /// Count `bytes` that `step` builds: an error when one value would pass
    /// [`MAX_VALUE_BYTES`] or the render would pass [`MAX_RENDER_BYTES`].
    pub fn charge(&self, step: &str, bytes: usize) -> Result<(), Error> {
        if bytes > MAX_VALUE_BYTES {
            return Err(too_large(step, Some(bytes)));
        }
        let mut current = self.remaining.load(Ordering::Relaxed);
        loop {
            let Some(left) = current.checked_sub(bytes) else {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!(
                        "the template built more than {} MiB of values and text in all (at {step}); stopped \
                         (a loop that keeps what it builds?)",
                        MAX_RENDER_BYTES >> 20
                    ),
                ));
            };
            match self.remaining.compare_exchange_weak(current, left, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Ok(()),
                Err(now) => current = now,
            }
        }
    }

    /// The bytes left, for measuring a value no larger than could still be charged.
    pub fn remaining(&self) -> usize {
        self.remaining.load(Ordering::Relaxed)
    }
}

/// The error for one step that would build a value of `bytes` (when known), over
/// [`MAX_VALUE_BYTES`].
pub fn too_large(step: &str, bytes: Option<usize>) -> Error {
    let limit = MAX_VALUE_BYTES >> 20;
    Error::new(
        ErrorKind::InvalidOperation,
        match bytes {
            Some(bytes) => format!(
                "{step} would build a value of {} MiB, over the {limit} MiB one value may hold; stopped",
                bytes.div_ceil(1 << 20)
            ),
            None => format!("{step} would build a value larger than the {limit} MiB one value may hold; stopped"),
        },
    )
}

/// The length of `value` as text, or `None` once it passes `limit` (counted as it is written,
/// so a huge value is never held: a list of many references to one large string has a huge
/// text form and no large allocation).
pub fn text_bytes(value: &Value, limit: usize) -> Option<usize> {
    if let Some(s) = value.as_str() {
        return (s.len() <= limit).then_some(s.len());
    }
    let mut counter = ByteCounter { bytes: 0, limit };
    write!(counter, "{value}").ok().map(|_| counter.bytes)
}

/// The length of `value`'s `{:#?}` form (what `pprint` writes), or `None` past `limit`.
pub fn debug_text_bytes(value: &Value, limit: usize) -> Option<usize> {
    let mut counter = ByteCounter { bytes: 0, limit };
    write!(counter, "{value:#?}").ok().map(|_| counter.bytes)
}

/// The entries iterating `value` yields (a string's characters, a list's items, a map's keys),
/// or `None` past `limit`. Counted by iterating only when the value does not know its length.
pub fn item_count(value: &Value, limit: usize) -> Option<usize> {
    if let Some(s) = value.as_str() {
        let chars = s.chars().count();
        return (chars <= limit).then_some(chars);
    }
    if let Some(n) = value.len() {
        return (n <= limit).then_some(n);
    }
    let iter = value.try_iter().ok()?;
    let mut n = 0usize;
    for _ in iter {
        n += 1;
        if n > limit {
            return None;
        }
    }
    Some(n)
}

/// The bytes a value newly produced by a step occupies: a string's length, or its entries for
/// a list or map (whose items are shared references, counted when they were built).
pub fn produced_bytes(value: &Value) -> usize {
    match value.kind() {
        ValueKind::String => value.as_str().map_or(0, str::len),
        ValueKind::Bytes => value.as_bytes().map_or(0, <[u8]>::len),
        ValueKind::Seq | ValueKind::Map | ValueKind::Iterable => {
            value.len().unwrap_or(0).saturating_mul(ITEM_BYTES)
        }
        _ => 0,
    }
}

struct ByteCounter {
    bytes: usize,
    limit: usize,
}

impl Write for ByteCounter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.bytes = self.bytes.saturating_add(s.len());
        if self.bytes > self.limit {
            return Err(fmt::Error);
        }
        Ok(())
    }
}
