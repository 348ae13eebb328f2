//! Limits for rendering templates that users and model files supply (`--prompt`, judge
//! prompts, GGUF chat templates, the generator's prompt). minijinja runs loops as written, so
//! two nested `range` loops ran for 40 s and grew to 2.5 GB before they were killed. Every such
//! render goes through here: a fuel budget (minijinja counts each instruction it runs) and a cap
//! on the rendered size, each with an error that says which limit was hit.

use serde::Serialize;
use std::io::Write;

/// Instructions one render may run. Our prompts and real chat templates run a few thousand
/// (a chat template over a long conversation some tens of thousands); a runaway loop reaches
/// this in well under a second.
pub const TEMPLATE_FUEL: u64 = 5_000_000;

/// Bytes one render may write: far above any prompt a model's context can hold.
pub const MAX_RENDERED_BYTES: usize = 16 << 20;

/// A minijinja environment with the fuel budget set.
pub fn environment<'source>() -> minijinja::Environment<'source> {
    let mut env = minijinja::Environment::new();
    env.set_fuel(Some(TEMPLATE_FUEL));
    env
}

/// Render `template` with `context`, stopping at [`MAX_RENDERED_BYTES`]. Fuel running out and
/// the size cap become errors that name the limit.
pub fn render<S: Serialize>(template: &minijinja::Template<'_, '_>, context: S) -> Result<String, minijinja::Error> {
    let mut out = CappedWriter { bytes: Vec::new(), over: false };
    match template.render_captured_to(context, &mut out) {
        Ok(_) => String::from_utf8(out.bytes).map_err(|_| {
            minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, "the template rendered invalid UTF-8")
        }),
        Err(_) if out.over => Err(minijinja::Error::new(
            minijinja::ErrorKind::InvalidOperation,
            format!("the rendered text passed {} MiB; stopped (a loop that writes too much?)", MAX_RENDERED_BYTES >> 20),
        )),
        Err(e) if e.kind() == minijinja::ErrorKind::OutOfFuel => Err(minijinja::Error::new(
            minijinja::ErrorKind::InvalidOperation,
            format!("the template ran more than {TEMPLATE_FUEL} steps; stopped (nested loops?)"),
        )),
        Err(e) => Err(e),
    }
}

struct CappedWriter {
    bytes: Vec<u8>,
    over: bool,
}

impl Write for CappedWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len() + buf.len() > MAX_RENDERED_BYTES {
            self.over = true;
            return Err(std::io::Error::other("rendered text too large"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
