//! Limits for rendering templates that users, datasets and model files supply (`--prompt`, a
//! dataset's `prompt.md`, judge prompts, GGUF chat templates, HTTP request bodies, the
//! generator's prompt). minijinja runs a template as written, so a few lines can loop for
//! minutes or build gigabytes in one step (`{% set s = s ~ s %}` seven times over a long
//! string, `(range(n) * m)|join`). Every such render goes through [`render`], which bounds:
//! - steps: a fuel budget (minijinja counts each instruction it runs);
//! - memory: the compiled template is rewritten (`guarded_program`) so that every step that
//!   builds a value — operators, slices, filters, tests, methods, and each write, into the
//!   output or into a `{% set %}` block or macro — is measured before it runs (`guard_hooks`,
//!   `filter_bounds`) against a cap on one value and on everything one render builds
//!   (`render_budget`);
//! - the rendered text's size.
//!
//! Each limit stops the render with an error that names the template and says which limit.

mod filter_bounds;
mod guard_hooks;
mod guarded_program;
mod native_ops;
mod render_budget;

pub use render_budget::{MAX_ITEMS, MAX_RENDER_BYTES, MAX_VALUE_BYTES};

use minijinja::machinery::{make_string_output, parse, CodeGenerator, Vm, WhitespaceConfig};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Instructions one render may run. Our prompts and real chat templates run a few thousand
/// (a chat template over a long conversation some tens of thousands); a runaway loop reaches
/// this in well under a second.
pub const TEMPLATE_FUEL: u64 = 5_000_000;

/// Bytes one render may write: far above any prompt a model's context can hold.
pub const MAX_RENDERED_BYTES: usize = 16 << 20;

/// A minijinja environment with the fuel budget set. Render its templates with [`render`]:
/// rendering them directly skips the memory limits.
pub fn environment<'source>() -> minijinja::Environment<'source> {
    let mut env = minijinja::Environment::new();
    env.set_fuel(Some(TEMPLATE_FUEL));
    env
}

/// Render `template` with `context` under the limits above. Fuel running out, a value or a
/// render too large, and the output passing [`MAX_RENDERED_BYTES`] become errors that name the
/// limit (and, through minijinja, the template and line).
pub fn render<S: Serialize>(template: &minijinja::Template<'_, '_>, context: S) -> Result<String, minijinja::Error> {
    let state = template.new_state();
    let env = state.env();
    let (name, source) = (template.name(), template.source());
    let whitespace = WhitespaceConfig {
        keep_trailing_newline: env.keep_trailing_newline(),
        lstrip_blocks: env.lstrip_blocks(),
        trim_blocks: env.trim_blocks(),
    };
    // The default delimiters: custom syntax is a minijinja feature this project does not enable.
    let syntax = parse(source, name, minijinja::syntax::SyntaxConfig::default(), whitespace)?;
    let mut generator = CodeGenerator::new(name, source);
    generator.compile_stmt(&syntax);
    let (program, blocks) = generator.finish();
    let program = guarded_program::guard(&program)?;
    let blocks = blocks
        .iter()
        .map(|(block, instructions)| guarded_program::guard(instructions).map(|guarded| (*block, guarded)))
        .collect::<Result<BTreeMap<_, _>, _>>()?;

    let budget = Arc::new(render_budget::RenderBudget::new());
    let root = minijinja::value::merge_maps([guard_hooks::hooks(budget), minijinja::Value::from_serialize(&context)]);
    let mut text = String::new();
    let result = {
        let mut output = make_string_output(&mut text);
        Vm::new(env).eval(&program, root, &blocks, &mut output, state.auto_escape()).map(|_| ())
    };
    match result {
        Err(e) if e.kind() == minijinja::ErrorKind::OutOfFuel => Err(minijinja::Error::new(
            minijinja::ErrorKind::InvalidOperation,
            format!("{name}: the template ran more than {TEMPLATE_FUEL} steps; stopped (nested loops?)"),
        )),
        Err(e) => Err(e),
        Ok(()) if text.len() > MAX_RENDERED_BYTES => Err(minijinja::Error::new(
            minijinja::ErrorKind::InvalidOperation,
            format!(
                "{name}: the rendered text passed {} MiB; stopped (a loop that writes too much?)",
                MAX_RENDERED_BYTES >> 20
            ),
        )),
        Ok(()) => Ok(text),
    }
}
