//! The functions a guarded program calls in place of minijinja's value-building steps
//! (`guarded_program` says which). Each measures what the step will build before it runs —
//! from its operands, without building anything — charges it to the render's budget, and then
//! runs minijinja's own step; a step whose size only shows afterwards (a filter the caller
//! added, a method) is charged from its result, which the input sizes already bound.

use super::filter_bounds::filter_bytes;
use super::guarded_program::{ADD, CONCAT, CONTAINS, EMIT, FILTER, METHOD, MUL, SLICE, TEST};
use super::native_ops::{evaluate, NativeOp};
use super::render_budget::{item_count, produced_bytes, text_bytes, too_large, RenderBudget, ITEM_BYTES, MAX_ITEMS, MAX_VALUE_BYTES};
use minijinja::value::{Rest, Value, ValueKind};
use minijinja::{AutoEscape, Error, ErrorKind, State};
use std::sync::Arc;

/// The hooks for one render, as a map to merge under the caller's context.
pub fn hooks(budget: Arc<RenderBudget>) -> Value {
    let mut map = std::collections::BTreeMap::<&str, Value>::new();
    let b = budget.clone();
    map.insert(CONCAT, Value::from_function(move |state: &State, args: Rest<Value>| concat(&b, state, &args)));
    let b = budget.clone();
    map.insert(ADD, Value::from_function(move |state: &State, args: Rest<Value>| add(&b, state, &args)));
    let b = budget.clone();
    map.insert(MUL, Value::from_function(move |state: &State, args: Rest<Value>| mul(&b, state, &args)));
    let b = budget.clone();
    map.insert(SLICE, Value::from_function(move |state: &State, args: Rest<Value>| slice(&b, state, &args)));
    let b = budget.clone();
    map.insert(CONTAINS, Value::from_function(move |state: &State, args: Rest<Value>| contains(&b, state, &args)));
    let b = budget.clone();
    map.insert(FILTER, Value::from_function(move |state: &State, args: Rest<Value>| filter(&b, state, args.0)));
    let b = budget.clone();
    map.insert(TEST, Value::from_function(move |state: &State, args: Rest<Value>| test(&b, state, args.0)));
    let b = budget.clone();
    map.insert(METHOD, Value::from_function(move |state: &State, args: Rest<Value>| method(&b, state, args.0)));
    let b = budget;
    map.insert(EMIT, Value::from_function(move |state: &State, args: Rest<Value>| emit(&b, state, &args)));
    Value::from(map)
}

fn arg(args: &[Value], i: usize) -> Value {
    args.get(i).cloned().unwrap_or(Value::UNDEFINED)
}

/// The text length of `value`, as an error once it passes what one value may hold.
fn measured(step: &str, value: &Value, limit: usize) -> Result<usize, Error> {
    text_bytes(value, limit).ok_or_else(|| too_large(step, None))
}

fn concat(budget: &RenderBudget, state: &State, args: &[Value]) -> Result<Value, Error> {
    let (a, b) = (arg(args, 0), arg(args, 1));
    let left = measured("`~`", &a, MAX_VALUE_BYTES)?;
    let right = measured("`~`", &b, MAX_VALUE_BYTES - left)?;
    budget.charge("`~`", left + right)?;
    evaluate(NativeOp::Concat, state.undefined_behavior(), &[a, b])
}

fn is_sequence(value: &Value) -> bool {
    matches!(value.kind(), ValueKind::Seq | ValueKind::Iterable)
}

fn add(budget: &RenderBudget, state: &State, args: &[Value]) -> Result<Value, Error> {
    let (a, b) = (arg(args, 0), arg(args, 1));
    if let (Some(x), Some(y)) = (a.as_str(), b.as_str()) {
        budget.charge("`+`", x.len().saturating_add(y.len()))?;
    } else if is_sequence(&a) && is_sequence(&b) {
        // minijinja joins lists lazily, so `l = l + l` doubles a length, not memory, until
        // something walks it; the length is what is bounded here.
        let items = item_count(&a, MAX_ITEMS)
            .zip(item_count(&b, MAX_ITEMS))
            .map(|(x, y)| x + y)
            .filter(|n| *n <= MAX_ITEMS)
            .ok_or_else(|| too_many_items("`+`"))?;
        budget.charge("`+`", items * ITEM_BYTES)?;
    }
    evaluate(NativeOp::Add, state.undefined_behavior(), &[a, b])
}

fn too_many_items(step: &str) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!("{step} would build a list of more than {MAX_ITEMS} items; stopped"),
    )
}

fn mul(budget: &RenderBudget, state: &State, args: &[Value]) -> Result<Value, Error> {
    let (a, b) = (arg(args, 0), arg(args, 1));
    let (operand, times) = if a.kind() == ValueKind::Number { (&b, &a) } else { (&a, &b) };
    if let (Some(n), true) = (times.as_usize(), times.kind() == ValueKind::Number) {
        if let Some(s) = operand.as_str() {
            budget.charge("`*`", s.len().saturating_mul(n))?;
        } else if is_sequence(operand) {
            let items = item_count(operand, MAX_ITEMS)
                .and_then(|len| len.checked_mul(n))
                .filter(|n| *n <= MAX_ITEMS)
                .ok_or_else(|| too_many_items("`*`"))?;
            budget.charge("`*`", items * ITEM_BYTES)?;
        }
    }
    evaluate(NativeOp::Mul, state.undefined_behavior(), &[a, b])
}

fn slice(budget: &RenderBudget, state: &State, args: &[Value]) -> Result<Value, Error> {
    // A slice is never larger than what it slices, which was measured when it was built.
    let sliced = evaluate(NativeOp::Slice, state.undefined_behavior(), args)?;
    budget.charge("a slice", produced_bytes(&sliced))?;
    Ok(sliced)
}

fn contains(budget: &RenderBudget, state: &State, args: &[Value]) -> Result<Value, Error> {
    // `x in "text"` turns a non-string `x` into text first.
    let (needle, haystack) = (arg(args, 0), arg(args, 1));
    if haystack.as_str().is_some() && needle.as_str().is_none() {
        let bytes = measured("`in`", &needle, MAX_VALUE_BYTES)?;
        budget.charge("`in`", bytes)?;
    }
    evaluate(NativeOp::Contains, state.undefined_behavior(), &[needle, haystack])
}

/// Split the name the guarded program appended from the call's own arguments.
fn named_call(mut args: Vec<Value>, what: &str) -> Result<(String, Vec<Value>), Error> {
    let name = args.pop().and_then(|v| v.as_str().map(str::to_owned)).ok_or_else(|| {
        Error::new(ErrorKind::InvalidOperation, format!("a guarded {what} call lost its name"))
    })?;
    Ok((name, args))
}

fn filter(budget: &RenderBudget, state: &State, args: Vec<Value>) -> Result<Value, Error> {
    let (name, args) = named_call(args, "filter")?;
    let step = format!("filter `{name}`");
    if let Some(bytes) = filter_bytes(&name, &args, state)? {
        budget.charge(&step, bytes)?;
    }
    let result = state.apply_filter(&name, &args).map_err(|e| {
        if e.kind() == ErrorKind::UnknownFilter && e.detail().is_none() {
            Error::new(ErrorKind::UnknownFilter, format!("filter {name} is unknown"))
        } else {
            e
        }
    })?;
    budget.charge(&step, produced_bytes(&result))?;
    Ok(result)
}

fn test(budget: &RenderBudget, state: &State, args: Vec<Value>) -> Result<Value, Error> {
    let (name, args) = named_call(args, "test")?;
    // Tests that compare text (`startingwith`, `lower`) turn their arguments into text.
    let step = format!("test `{name}`");
    let mut bytes = 0usize;
    for value in &args {
        if value.as_str().is_none() && !matches!(value.kind(), ValueKind::Number | ValueKind::Bool | ValueKind::None | ValueKind::Undefined) {
            bytes += measured(&step, value, MAX_VALUE_BYTES - bytes)?;
        }
    }
    budget.charge(&step, bytes)?;
    state.perform_test(&name, &args).map(Value::from).map_err(|e| {
        if e.kind() == ErrorKind::UnknownTest && e.detail().is_none() {
            Error::new(ErrorKind::UnknownTest, format!("test {name} is unknown"))
        } else {
            e
        }
    })
}

fn method(budget: &RenderBudget, state: &State, args: Vec<Value>) -> Result<Value, Error> {
    let (name, args) = named_call(args, "method")?;
    let step = format!("method `{name}`");
    let receiver = arg(&args, 0);
    let rest = args.get(1..).unwrap_or_default();
    if let Some(bytes) = string_method_bytes(&name, &receiver, rest)? {
        budget.charge(&step, bytes)?;
    }
    let result = receiver.call_method(state, &name, rest)?;
    budget.charge(&step, produced_bytes(&result))?;
    Ok(result)
}

/// What the Python string methods that chat templates call could build, where that can pass
/// the input's own size (the others return at most a case-mapped copy).
fn string_method_bytes(name: &str, receiver: &Value, args: &[Value]) -> Result<Option<usize>, Error> {
    let Some(s) = receiver.as_str() else { return Ok(None) };
    let text = |i: usize| args.get(i).and_then(Value::as_str).unwrap_or("");
    Ok(match name {
        "replace" => Some(super::filter_bounds::replaced_bytes(s, text(0), text(1))),
        "split" if !args.is_empty() => {
            Some(super::filter_bounds::pieces(s, text(0)).saturating_mul(ITEM_BYTES).saturating_add(s.len()))
        }
        "split" => Some(s.split_whitespace().count().saturating_mul(ITEM_BYTES).saturating_add(s.len())),
        "upper" | "lower" | "title" | "capitalize" => Some(s.len().saturating_mul(3)),
        _ => None,
    })
}

fn emit(budget: &RenderBudget, state: &State, args: &[Value]) -> Result<Value, Error> {
    let value = arg(args, 0);
    // HTML escaping writes up to 6 bytes for one (`&quot;`).
    let escaping = !matches!(state.auto_escape(), AutoEscape::None) && !value.is_safe();
    let step = "writing a value";
    let remaining = budget.remaining();
    let bytes = match text_bytes(&value, remaining.min(MAX_VALUE_BYTES)) {
        Some(bytes) => bytes,
        // Past what is left of the render's budget: charging it reports that limit.
        None if remaining < MAX_VALUE_BYTES => remaining.saturating_add(1),
        None => return Err(too_large(step, None)),
    };
    budget.write(if escaping { bytes.saturating_mul(6) } else { bytes })?;
    Ok(value)
}
