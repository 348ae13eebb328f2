//! What a number read from text is: its value in a base unit, its kind, the rounding it was
//! written with, its sign, hedge and range, and the words around it. Plain data; `parse` fills
//! it in, `dates` and `context` add to it, the check in `mod.rs` compares two of them.

/// What a number measures. Two numbers are compared only when their kinds agree.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// A sum of money (`currency` set) or a count; both can carry a scale word.
    Amount { currency: Option<&'static str> },
    Percent,
    /// Percentage points or basis points, in percentage points.
    Points,
    /// A measure in one dimension (`time`, `length`, ...), value in the dimension's base unit.
    Measure(&'static str),
    /// `2x`, `3 times`.
    Multiple,
    Year,
    /// `value` is `yyyymmdd`, the day 0 when only the month was written.
    Date { has_day: bool },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Up,
    Down,
}

/// How exactly the text commits to the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hedge {
    Exact,
    About,
    AtLeast,
    AtMost,
}

/// One number as the text states it.
#[derive(Debug, Clone, PartialEq)]
pub struct Mention {
    /// Magnitude in the kind's base unit (the sign is in `direction`).
    pub value: f64,
    /// Half a unit of the last digit written, in the same unit: the rounding the text allows.
    pub tolerance: f64,
    pub kind: Kind,
    /// Explicitly negative or positive (`-5%`, `(1,234)`, `+3%`), or said to fall or rise.
    pub direction: Option<Direction>,
    pub hedge: Hedge,
    /// A scale word or letter was written (`million`, `bn`, `k`).
    pub has_scale: bool,
    /// The low and high ends when the number is one end of a range (`5-10%`).
    pub range: Option<(f64, f64)>,
    /// The mention as written (`$4.2 billion`).
    pub text: String,
    /// Char positions of the mention in the text.
    pub start: usize,
    pub end: usize,
    /// Content words near the number in its sentence, lowercased and singular.
    pub keywords: Vec<String>,
    /// Years named in the same sentence (other than the mention itself).
    pub years: Vec<i32>,
    /// One of three or more numbers in a row with no word between them (a table row read as
    /// text): which column it belongs to is unknown, so it supports but never contradicts.
    pub tabular: bool,
    /// The word right after the number (`12 stores` -> `store`, `34 Nm` -> `nm`): what a
    /// plain count counts. None when a sign, punctuation or a common word follows.
    pub noun: Option<String>,
    /// The digits' own value and rounding, and what was multiplied in (scale × unit factor):
    /// a range's bare first end borrows the second end's multiplier.
    pub(super) number: f64,
    pub(super) number_tolerance: f64,
    pub(super) multiplier: f64,
    /// Nothing but the digits was written (no sign, currency, scale or unit).
    pub(super) bare: bool,
}
