//! Containing panics of third-party parsers (PDF, GGUF headers) on malformed files.
//!
//! Some readers we depend on panic on inputs they do not expect (a division by a zero
//! alignment, an arithmetic overflow, an index out of range). A file that makes them panic is a
//! bad file, not a bug of ours: `contain` turns the panic into an error message, and keeps the
//! default "thread panicked" report off the user's terminal while it does.

use std::any::Any;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    static CONTAINING: Cell<bool> = const { Cell::new(false) };
}

/// Run `f`; a panic inside it becomes `Err` with its message.
pub(crate) fn contain<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    install_hook();
    let outer = CONTAINING.with(|c| c.replace(true));
    let result = catch_unwind(AssertUnwindSafe(f));
    CONTAINING.with(|c| c.set(outer));
    result.map_err(|panic| panic_message(&panic))
}

/// One process-wide hook that stays quiet for panics being contained on this thread and hands
/// every other panic to the hook that was there before.
fn install_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !CONTAINING.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

fn panic_message(panic: &Box<dyn Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown cause".into())
}
