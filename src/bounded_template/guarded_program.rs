//! Rewrites a compiled template so that every step that can build a large value goes through a
//! hook that measures it first. minijinja offers no callback for its operators (`~`, `+`, `*`),
//! slices, or the text a template writes into a `{% set %}` block or a macro, and fuel counts
//! steps, not bytes: one `~` can double a string. So the compiled instructions are copied with
//! those steps replaced by calls to functions the render supplies (`guard_hooks`):
//! - `~`, `+`, `*`, slices, `in`, filters, tests and method calls become calls of a hook that
//!   checks the size first and then runs minijinja's own operation;
//! - each write (a value or the template's own text) is preceded by a hook that counts it,
//!   so captured text is bounded as well as the output.
//!
//! Jump targets are renumbered for the inserted instructions. Names with the hooks' prefix are
//! refused in templates, so a template cannot replace a hook with its own macro.

use minijinja::machinery::{Instruction, Instructions};
use minijinja::value::Value;
use minijinja::{Error, ErrorKind};

/// The prefix of every hook name (also refused as a template name).
pub const HOOK_PREFIX: &str = "__assay_guard_";
pub const CONCAT: &str = "__assay_guard_concat";
pub const ADD: &str = "__assay_guard_add";
pub const MUL: &str = "__assay_guard_mul";
pub const SLICE: &str = "__assay_guard_slice";
pub const CONTAINS: &str = "__assay_guard_in";
pub const FILTER: &str = "__assay_guard_filter";
pub const TEST: &str = "__assay_guard_test";
pub const METHOD: &str = "__assay_guard_method";
pub const EMIT: &str = "__assay_guard_emit";

/// A copy of `program` with every value-building step routed through a hook.
pub fn guard<'s>(program: &Instructions<'s>) -> Result<Instructions<'s>, Error> {
    let mut guarded = Instructions::new(program.name(), program.source());
    // new_index[i]: where instruction i of the original now starts (and the end, for jumps there).
    let mut new_index = Vec::with_capacity(program.len() + 1);
    for pc in 0..program.len() as u32 {
        new_index.push(guarded.len() as u32);
        let Some(instruction) = program.get(pc) else { break };
        let mut push = |instruction: Instruction<'s>| match (program.get_span(pc), program.get_line(pc)) {
            (Some(span), _) => guarded.add_with_span(instruction, span),
            (None, Some(line)) => guarded.add_with_line(instruction, u16::try_from(line).unwrap_or(u16::MAX)),
            (None, None) => guarded.add(instruction),
        };
        refuse_hook_names(instruction, program.name())?;
        match instruction {
            Instruction::StringConcat => {
                push(Instruction::CallFunction(CONCAT, Some(2)));
            }
            Instruction::Add => {
                push(Instruction::CallFunction(ADD, Some(2)));
            }
            Instruction::Mul => {
                push(Instruction::CallFunction(MUL, Some(2)));
            }
            Instruction::Slice => {
                push(Instruction::CallFunction(SLICE, Some(4)));
            }
            Instruction::In => {
                push(Instruction::CallFunction(CONTAINS, Some(2)));
            }
            Instruction::ApplyFilter(name, args, _) => {
                for step in call_with_name(FILTER, name, *args)? {
                    push(step);
                }
            }
            Instruction::PerformTest(name, args, _) => {
                for step in call_with_name(TEST, name, *args)? {
                    push(step);
                }
            }
            Instruction::CallMethod(name, args) => {
                for step in call_with_name(METHOD, name, *args)? {
                    push(step);
                }
            }
            Instruction::Emit => {
                push(Instruction::CallFunction(EMIT, Some(1)));
                push(Instruction::Emit);
            }
            Instruction::EmitRaw(text) => {
                push(Instruction::LoadConst(Value::from(*text)));
                push(Instruction::CallFunction(EMIT, Some(1)));
                push(Instruction::Emit);
            }
            other => {
                push(other.clone());
            }
        }
    }
    new_index.push(guarded.len() as u32);
    for pc in 0..guarded.len() as u32 {
        if let Some(instruction) = guarded.get_mut(pc) {
            renumber_jump(instruction, &new_index)?;
        }
    }
    Ok(guarded)
}

/// The hook call for a named filter, test or method: the name goes on the stack as the last
/// argument. With a counted argument list (`*args`) the count is on top of the stack, so the
/// name is slid under it and the count raised by one.
fn call_with_name<'s>(hook: &'static str, name: &'s str, args: Option<u16>) -> Result<Vec<Instruction<'s>>, Error> {
    let name = Instruction::LoadConst(Value::from(name));
    Ok(match args {
        Some(n) => {
            let n = n.checked_add(1).ok_or_else(|| {
                Error::new(ErrorKind::InvalidOperation, "a call with 65535 arguments is not supported")
            })?;
            vec![name, Instruction::CallFunction(hook, Some(n))]
        }
        None => vec![
            name,
            Instruction::Swap,
            Instruction::LoadConst(Value::from(1)),
            Instruction::Add,
            Instruction::CallFunction(hook, None),
        ],
    })
}

fn refuse_hook_names(instruction: &Instruction<'_>, template: &str) -> Result<(), Error> {
    let name = match instruction {
        Instruction::StoreLocal(name)
        | Instruction::Lookup(name)
        | Instruction::CallFunction(name, _)
        | Instruction::Enclose(name)
        | Instruction::BuildMacro(name, _, _) => *name,
        _ => return Ok(()),
    };
    if name.starts_with(HOOK_PREFIX) {
        return Err(Error::new(
            ErrorKind::SyntaxError,
            format!("{template}: names beginning with {HOOK_PREFIX} are reserved ({name})"),
        ));
    }
    Ok(())
}

fn renumber_jump(instruction: &mut Instruction<'_>, new_index: &[u32]) -> Result<(), Error> {
    let target = match instruction {
        Instruction::Jump(target)
        | Instruction::JumpIfFalse(target)
        | Instruction::JumpIfFalseOrPop(target)
        | Instruction::JumpIfTrueOrPop(target)
        | Instruction::Iterate(target)
        | Instruction::BuildMacro(_, target, _) => target,
        _ => return Ok(()),
    };
    *target = *new_index.get(*target as usize).ok_or_else(|| {
        Error::new(ErrorKind::InvalidOperation, "a compiled jump points past the template's end")
    })?;
    Ok(())
}
