//! Ctrl-C for the long commands: the first asks the library to stop at its next checkpoint
//! (the next token, the next item), keeping what finished; a second, for someone who will not
//! wait for the item in flight or a model still loading, ends the process at once. A run stopped
//! so is left as a crash leaves it: every committed item kept, the run resumable.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The flag the first Ctrl-C sets; `on_second` is said on stderr before the second one exits.
pub fn cancel_on_ctrl_c(on_second: &'static str) -> Arc<AtomicBool> {
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = cancel.clone();
    // Without a handler (another was set first, as in tests) Ctrl-C keeps its default: exit.
    let _ = ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::Relaxed) {
            eprintln!("\ninterrupted again: stopping now. {on_second}");
            // 130: the shell's code for a process ended by SIGINT.
            std::process::exit(130);
        }
        eprintln!("\nstopping after the work in flight (Ctrl-C again to stop at once)");
    });
    cancel
}
