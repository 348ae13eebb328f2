//! minijinja's own operators, run on two values after a hook has measured them. The operators
//! (`ops::add` and friends) are private to minijinja, so each is compiled once as an expression
//! (`a + b`) in a bare environment per undefined-value rule and evaluated with the operands:
//! the result, errors included, is exactly what the unguarded template would have produced.

use minijinja::value::Value;
use minijinja::{Environment, Error, Expression, UndefinedBehavior};
use std::sync::OnceLock;

/// An operator the guarded program hands back to minijinja.
#[derive(Clone, Copy)]
pub enum NativeOp {
    Concat,
    Add,
    Mul,
    Slice,
    Contains,
}

const EXPRESSIONS: [&str; 5] = ["a ~ b", "a + b", "a * b", "a[b:c:d]", "a in b"];

const BEHAVIORS: [UndefinedBehavior; 4] = [
    UndefinedBehavior::Lenient,
    UndefinedBehavior::Chainable,
    UndefinedBehavior::SemiStrict,
    UndefinedBehavior::Strict,
];

static ENVIRONMENTS: OnceLock<Vec<Environment<'static>>> = OnceLock::new();
static COMPILED: OnceLock<Vec<Vec<Expression<'static, 'static>>>> = OnceLock::new();

/// Evaluate `op` on `args` (`a`, `b`, and for a slice `c`, `d`) under `behavior`.
pub fn evaluate(op: NativeOp, behavior: UndefinedBehavior, args: &[Value]) -> Result<Value, Error> {
    let compiled = COMPILED.get_or_init(|| {
        let environments = ENVIRONMENTS.get_or_init(|| {
            BEHAVIORS
                .iter()
                .map(|behavior| {
                    let mut env = Environment::new();
                    env.set_undefined_behavior(*behavior);
                    env
                })
                .collect()
        });
        environments
            .iter()
            .map(|env| {
                EXPRESSIONS
                    .iter()
                    // The expressions are fixed and valid; a failure would be a minijinja bug,
                    // reported on use below rather than here.
                    .filter_map(|source| env.compile_expression(source).ok())
                    .collect()
            })
            .collect()
    });
    let which = BEHAVIORS.iter().position(|b| *b == behavior).unwrap_or(0);
    let expression = compiled.get(which).and_then(|list| list.get(op as usize)).ok_or_else(|| {
        Error::new(minijinja::ErrorKind::InvalidOperation, "a template operator failed to compile")
    })?;
    let arg = |i: usize| args.get(i).cloned().unwrap_or(Value::from(()));
    expression
        .eval(minijinja::context! { a => arg(0), b => arg(1), c => arg(2), d => arg(3) })
        // A fresh error of the same kind, so that minijinja places it in the template being
        // rendered instead of in this expression.
        .map_err(|e| match e.detail() {
            Some(detail) => Error::new(e.kind(), detail.to_owned()),
            None => Error::from(e.kind()),
        })
}
