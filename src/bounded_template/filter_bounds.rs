//! How much minijinja's built-in filters can build, worked out from their arguments before they
//! run. Most filters return at most a copy of their input (whose size was measured when it was
//! built) and are charged from their result; these are the ones that can build more than their
//! input, or turn each character or item into a value of its own, or that first turn a value into
//! text (a list of many references to one large string is small until it is written out).

use super::render_budget::{debug_text_bytes, item_count, text_bytes, too_large, ITEM_BYTES, MAX_ITEMS, MAX_VALUE_BYTES};
use minijinja::value::{Value, ValueKind};
use minijinja::{Error, ErrorKind, State};

/// The bytes filter `name` would build from `args` (the filtered value first), when that can be
/// known beforehand and may pass its input's size; an error when it passes what one value may
/// hold. `None`: the result is charged once it exists.
pub fn filter_bytes(name: &str, args: &[Value], state: &State) -> Result<Option<usize>, Error> {
    let step = format!("filter `{name}`");
    let value = args.first().cloned().unwrap_or(Value::UNDEFINED);
    let text = |v: &Value| text_bytes(v, MAX_VALUE_BYTES).ok_or_else(|| too_large(&step, None));
    let items = |v: &Value| item_count(v, MAX_ITEMS).ok_or_else(|| too_many(&step));
    // The text of an argument, once its length is known to fit.
    let string = |v: Option<&Value>| -> Result<String, Error> {
        match v {
            Some(v) => text(v).map(|_| text_of(v)),
            None => Ok(String::new()),
        }
    };
    let positional = |i: usize| args.get(i).filter(|v| !v.is_kwargs());
    let bytes = match name {
        "replace" => {
            let (from, to) = (string(positional(1))?, string(positional(2))?);
            replaced_bytes(&string(Some(&value))?, &from, &to)
        }
        "indent" => {
            let width = positional(1).cloned().or_else(|| kwarg(args, "width")).and_then(|w| w.as_usize()).unwrap_or(4);
            let s = string(Some(&value))?;
            s.len().saturating_add((s.matches('\n').count() + 1).saturating_mul(width))
        }
        "join" => {
            let separator = string(positional(1))?;
            joined_bytes(&value, &separator).ok_or_else(|| too_large(&step, None))?
        }
        "format" => {
            // Widths and precisions (`%20000000s`) and `*` widths taken from the arguments can
            // each pad a conversion; count every number as padding, plus every argument's text.
            let pattern = text_of(&value);
            let mut bytes = pattern.len().saturating_add(numbers_in(&pattern));
            for argument in args.iter().skip(1) {
                bytes = bytes.saturating_add(text(argument)?);
                if let Some(n) = argument.as_usize() {
                    bytes = bytes.saturating_add(n);
                }
            }
            bytes
        }
        "string" | "safe" | "trim" => text(&value)?,
        "pprint" => debug_text_bytes(&value, MAX_VALUE_BYTES).ok_or_else(|| too_large(&step, None))?,
        "escape" | "e" => text(&value)?.saturating_mul(6),
        "lower" | "upper" | "title" | "capitalize" => text(&value)?.saturating_mul(3),
        "reverse" if value.kind() == ValueKind::String => text(&value)?,
        "split" => {
            let s = string(Some(&value))?;
            let n = match positional(1).filter(|v| !v.is_none()) {
                Some(separator) => pieces(&s, &string(Some(separator))?),
                None => s.split_whitespace().count(),
            };
            n.saturating_mul(ITEM_BYTES).saturating_add(s.len())
        }
        "lines" => {
            let s = string(Some(&value))?;
            (s.matches('\n').count() + 1).saturating_mul(ITEM_BYTES).saturating_add(s.len())
        }
        "batch" | "slice" => {
            // `batch(n)` reserves n places at once; `slice(n)` makes n lists.
            let count = positional(1).and_then(Value::as_usize).unwrap_or(0);
            if count > MAX_ITEMS {
                return Err(too_many(&step));
            }
            items(&value)?.saturating_add(count.saturating_mul(2)).saturating_mul(ITEM_BYTES)
        }
        "chain" | "zip" => {
            let mut total = 0usize;
            for argument in args.iter().filter(|v| !v.is_kwargs()) {
                total = total.saturating_add(items(argument)?);
            }
            if total > MAX_ITEMS {
                return Err(too_many(&step));
            }
            total.saturating_mul(ITEM_BYTES)
        }
        "map" => mapped_bytes(&value, args, state, &step)?,
        "list" | "sort" | "unique" | "reverse" | "dictsort" | "items" | "groupby" | "select" | "reject"
        | "selectattr" | "rejectattr" => items(&value)?.saturating_mul(ITEM_BYTES),
        _ => return Ok(None),
    };
    if bytes > MAX_VALUE_BYTES {
        return Err(too_large(&step, Some(bytes)));
    }
    Ok(Some(bytes))
}

/// `map('filter', …)` runs another filter on every item, outside the guarded program: each of
/// those calls is bounded here, summed.
fn mapped_bytes(value: &Value, args: &[Value], state: &State, step: &str) -> Result<usize, Error> {
    let count = item_count(value, MAX_ITEMS).ok_or_else(|| too_many(step))?;
    let mut bytes = count.saturating_mul(ITEM_BYTES);
    let Some(inner) = args.get(1).filter(|v| !v.is_kwargs()).and_then(Value::as_str) else {
        return Ok(bytes);
    };
    let Ok(iter) = value.try_iter() else { return Ok(bytes) };
    for item in iter {
        let mut inner_args = vec![item];
        inner_args.extend(args.iter().skip(2).cloned());
        if let Some(n) = filter_bytes(inner, &inner_args, state)? {
            bytes = bytes.saturating_add(n);
            if bytes > MAX_VALUE_BYTES {
                return Err(too_large(step, Some(bytes)));
            }
        }
    }
    Ok(bytes)
}

fn text_of(value: &Value) -> String {
    match value.as_str() {
        Some(s) => s.to_owned(),
        // Only called once the value's text length was measured, or on small arguments.
        None => text_bytes(value, MAX_VALUE_BYTES).map(|_| value.to_string()).unwrap_or_default(),
    }
}

fn kwarg(args: &[Value], key: &str) -> Option<Value> {
    args.last().filter(|v| v.is_kwargs()).and_then(|k| k.get_attr(key).ok()).filter(|v| !v.is_undefined())
}

/// The length of `s` with every `from` replaced by `to` (an empty `from` matches between every
/// two characters and at both ends, as `str::replace` does).
pub fn replaced_bytes(s: &str, from: &str, to: &str) -> usize {
    let matches = if from.is_empty() { s.chars().count() + 1 } else { s.matches(from).count() };
    s.len().saturating_sub(matches.saturating_mul(from.len())).saturating_add(matches.saturating_mul(to.len()))
}

/// How many pieces splitting `s` on `separator` makes (an empty separator splits between
/// characters).
pub fn pieces(s: &str, separator: &str) -> usize {
    if separator.is_empty() {
        s.chars().count() + 2
    } else {
        s.matches(separator).count() + 1
    }
}

/// The sum of every decimal number written in a format pattern.
fn numbers_in(pattern: &str) -> usize {
    pattern
        .split(|c: char| !c.is_ascii_digit())
        .filter(|run| !run.is_empty())
        .map(|run| run.parse::<usize>().unwrap_or(usize::MAX))
        .fold(0usize, usize::saturating_add)
}

/// The text `join` would build, or `None` past what one value may hold.
fn joined_bytes(value: &Value, separator: &str) -> Option<usize> {
    if let Some(s) = value.as_str() {
        let chars = s.chars().count();
        return Some(s.len().saturating_add(chars.saturating_sub(1).saturating_mul(separator.len())))
            .filter(|n| *n <= MAX_VALUE_BYTES);
    }
    let mut bytes = 0usize;
    for (i, item) in value.try_iter().ok()?.enumerate() {
        if i > 0 {
            bytes = bytes.saturating_add(separator.len());
        }
        bytes = bytes.saturating_add(text_bytes(&item, MAX_VALUE_BYTES.checked_sub(bytes)?)?);
        if bytes > MAX_VALUE_BYTES {
            return None;
        }
    }
    Some(bytes)
}

fn too_many(step: &str) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!("{step} would build a list of more than {MAX_ITEMS} items; stopped"),
    )
}
