//! Numbers are checked, not judged: every number an answer states is compared with the numbers
//! of the reference (and the golden context when there is one). A number whose value the
//! sources state (at the precision written, in any scale or unit: `$4.2 billion` is `4,213
//! million` rounded), or that is a sum, difference or ratio of two of theirs, is *supported*.
//! A number is a *conflict* only when the sources give the same kind of quantity (same unit or
//! currency, no clashing years) with the same key words around it, at another value, and the
//! answer does not state that value itself. Anything else is not checkable and not counted.
//!
//! False conflicts hurt more than misses (a conflict vetoes a statement in the statement judge),
//! so every doubt leaves a number unchecked.

mod written_alike;
mod context;
mod dates;
mod mention;
pub mod parse;
mod scan;
pub mod units;

pub use written_alike::written_as_the_reference;
use parse::{find_mentions, Direction, Hedge, Kind, Mention};

/// A number of the answer that the sources contradict.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct NumberConflict {
    /// The number as the answer writes it.
    pub answer: String,
    /// The number of the sources it contradicts, as written there.
    pub reference: String,
    /// One line for people: `says 12%, reference says 15% (operating margin)`.
    pub description: String,
}

/// What the numeric check found in one answer.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct NumberCheck {
    /// Numbers whose value the sources state or imply.
    pub supported: usize,
    pub conflicts: Vec<NumberConflict>,
    /// Numbers the sources say nothing comparable about.
    pub unchecked: usize,
}

impl NumberCheck {
    /// Share of the checkable numbers (supported or contradicted) that are supported; None when
    /// the answer states no checkable number (never a made-up 1.0).
    pub fn score(&self) -> Option<f64> {
        let checked = self.supported + self.conflicts.len();
        (checked > 0).then(|| self.supported as f64 / checked as f64)
    }
}

/// The first number of `statement` that `reference` contradicts, described for people
/// (`says 12%, reference says 15% (margin, operating)`); None when nothing is contradicted.
/// The statement judge's veto: pure, deterministic, never panics.
pub fn number_conflict(statement: &str, reference: &str) -> Option<String> {
    check_numbers(statement, &[reference]).conflicts.into_iter().next().map(|c| c.description)
}

/// The metric `number_consistency` of one answer against its reference answer and, when the
/// dataset has one, the golden context (more numbers to support the answer, and to contradict it).
pub fn number_consistency(answer: &str, reference: &str, context: Option<&str>) -> NumberCheck {
    let mut sources = vec![reference];
    sources.extend(context);
    check_numbers(answer, &sources)
}

/// Every number of `answer` against the numbers of `sources`.
pub fn check_numbers(answer: &str, sources: &[&str]) -> NumberCheck {
    let said = find_mentions(answer);
    let known: Vec<Mention> = sources.iter().flat_map(|s| find_mentions(s)).collect();
    let mut check = NumberCheck::default();
    for a in &said {
        match verdict(a, &known, &said) {
            Verdict::Supported => check.supported += 1,
            Verdict::Unchecked => check.unchecked += 1,
            Verdict::Conflict(conflict) => {
                if !check.conflicts.iter().any(|c| c.description == conflict.description) {
                    check.conflicts.push(conflict);
                }
            }
        }
    }
    check
}

enum Verdict {
    Supported,
    Conflict(NumberConflict),
    Unchecked,
}

fn verdict(a: &Mention, known: &[Mention], said: &[Mention]) -> Verdict {
    let mut opposite_sign = None;
    for r in known.iter().filter(|r| supports(a, r) && values_agree(a, r)) {
        if opposite(a.direction, r.direction) {
            opposite_sign = opposite_sign.or(Some(r));
        } else {
            return Verdict::Supported;
        }
    }
    if derived(a, known) {
        return Verdict::Supported;
    }
    if let Some(r) = opposite_sign.filter(|r| same_quantity(a, r)) {
        return Verdict::Conflict(conflict(a, r));
    }
    // The reference number of the same quantity with the most key words in common.
    let candidate = known
        .iter()
        .filter(|r| contradictable(a, r) && same_quantity(a, r))
        // The answer states that value too, of something at least as like it: `a` is likely
        // another quantity. (The same value said of something else does not count: `6.4
        // percent for Black women` stays checkable beside `unemployment stood at 6.4 percent`.)
        .filter(|r| {
            let common = shared(&a.keywords, &r.keywords);
            !said.iter().any(|s| {
                !std::ptr::eq(s, a) && comparable(s.kind, r.kind) && values_agree(s, r) && shared(&s.keywords, &r.keywords) >= common
            })
        })
        // Ties (this year's and last year's figure): the nearer value is the one meant.
        .max_by(|r, s| {
            let gap = |m: &Mention| -(m.value - a.value).abs();
            shared(&a.keywords, &r.keywords).cmp(&shared(&a.keywords, &s.keywords)).then(gap(r).total_cmp(&gap(s)))
        });
    match candidate {
        Some(r) => Verdict::Conflict(conflict(a, r)),
        None => Verdict::Unchecked,
    }
}

fn conflict(a: &Mention, r: &Mention) -> NumberConflict {
    let common: Vec<&str> = a.keywords.iter().filter(|k| r.keywords.contains(k)).map(String::as_str).collect();
    let said = |m: &Mention| match (m.direction, m.text.starts_with(['-', '−', '(', '+'])) {
        (Some(Direction::Down), false) => format!("{} (a fall)", m.text),
        (Some(Direction::Up), false) => format!("{} (a rise)", m.text),
        _ => m.text.clone(),
    };
    let about = if common.is_empty() { String::new() } else { format!(" ({})", common.join(", ")) };
    NumberConflict {
        answer: a.text.clone(),
        reference: r.text.clone(),
        description: format!("says {}, reference says {}{about}", said(a), said(r)),
    }
}

fn opposite(a: Option<Direction>, b: Option<Direction>) -> bool {
    matches!((a, b), (Some(x), Some(y)) if x != y)
}

/// Kinds whose values can support each other (`2023` and `March 3, 2023`; `$5 billion` and
/// `5 billion`).
fn comparable(a: Kind, b: Kind) -> bool {
    match (a, b) {
        (Kind::Amount { currency: x }, Kind::Amount { currency: y }) => x.is_none() || y.is_none() || x == y,
        (Kind::Percent | Kind::Points, Kind::Percent | Kind::Points) => true,
        (Kind::Measure(x), Kind::Measure(y)) => x == y,
        (Kind::Multiple, Kind::Multiple) => true,
        (Kind::Year | Kind::Date { .. }, Kind::Year | Kind::Date { .. }) => true,
        _ => false,
    }
}

/// `r` can support `a`: comparable kinds, or a plain figure of a table (`4.7` in a row of
/// `Consumer Price Index, percent change`) for a percentage, points, a measure or a multiple.
fn supports(a: &Mention, r: &Mention) -> bool {
    let plain = |m: &Mention| m.kind == Kind::Amount { currency: None } && !m.has_scale;
    let unit_kind = |m: &Mention| matches!(m.kind, Kind::Percent | Kind::Points | Kind::Measure(_) | Kind::Multiple);
    comparable(a.kind, r.kind) || (unit_kind(a) && plain(r)) || (plain(a) && unit_kind(r))
}

/// A plain count (no currency, scale or unit) is compared only with a count of the same thing:
/// the word after both must be the same (`12 stores` and `15 stores`; not `2 × USB-C` and
/// `100 W`).
fn same_count_noun(a: &Mention, r: &Mention) -> bool {
    a.noun.is_some() && a.noun == r.noun
}

/// Kinds that can contradict each other: the same kind exactly, and for amounts the same
/// footing (money against money or a scaled count; a bare table figure has no stated scale).
fn contradictable(a: &Mention, r: &Mention) -> bool {
    match (a.kind, r.kind) {
        (Kind::Amount { currency: x }, Kind::Amount { currency: y }) => match (x, y) {
            (Some(x), Some(y)) => x == y,
            (None, None) => a.has_scale == r.has_scale && (a.has_scale || same_count_noun(a, r)),
            _ => a.has_scale && r.has_scale,
        },
        (Kind::Date { has_day: x }, Kind::Date { has_day: y }) => x == y,
        (x, y) => x == y,
    }
}

/// Key words in common.
fn shared(a: &[String], b: &[String]) -> usize {
    a.iter().filter(|k| b.contains(k)).count()
}

/// The two numbers are said of the same thing: the key words around them match (at least two
/// in common, or the one word each has, three for years), neither is a cell of a table row, and
/// no year tells them apart.
fn same_quantity(a: &Mention, r: &Mention) -> bool {
    if !a.years.is_empty() && !r.years.is_empty() && !a.years.iter().any(|y| r.years.contains(y)) {
        return false;
    }
    if a.tabular || r.tabular {
        return false;
    }
    let common = shared(&a.keywords, &r.keywords);
    // One word in common is enough only when it is all either side says (`Margin: 12%`):
    // beside more words it is a coincidence (`request` in `the Naval Reactors budget request`).
    let both_single = a.keywords.len() == 1 && r.keywords.len() == 1;
    match a.kind {
        Kind::Year | Kind::Date { .. } => common >= 3,
        _ => common >= 2 || (common == 1 && both_single),
    }
}

/// The values agree at the precision written, allowing for hedges, ranges and a scale one of
/// the two left unsaid (a table `in millions`).
fn values_agree(a: &Mention, r: &Mention) -> bool {
    match (a.kind, r.kind) {
        (Kind::Date { has_day: x }, Kind::Date { has_day: y }) => {
            let (av, rv) = (a.value as u64, r.value as u64);
            if x && y {
                av == rv
            } else {
                av / 100 == rv / 100
            }
        }
        (Kind::Year, Kind::Date { .. }) => a.value as u64 == r.value as u64 / 10_000,
        (Kind::Date { .. }, Kind::Year) => a.value as u64 / 10_000 == r.value as u64,
        (Kind::Year, Kind::Year) => a.value == r.value,
        (Kind::Amount { .. }, Kind::Amount { .. }) if a.has_scale != r.has_scale => {
            [1.0, 1e3, 1e6, 1e9].iter().any(|f| close(a, r, *f) || close(r, a, *f))
        }
        _ => close(a, r, 1.0),
    }
}

/// `a` against `r` with `r` scaled by `factor`.
fn close(a: &Mention, r: &Mention, factor: f64) -> bool {
    let (av, rv) = (a.value, r.value * factor);
    let diff = (av - rv).abs();
    // The two rounding intervals overlap (`12.5%` may be written `12%`, `13%` may not).
    let exact = 1e-9 * av.abs().max(rv.abs()).max(1.0);
    let slack = a.tolerance + r.tolerance * factor;
    if diff < slack || diff <= exact {
        return true;
    }
    let slack = slack + exact;
    let within = |(lo, hi): (f64, f64), v: f64, f: f64| v >= lo * f - slack && v <= hi * f + slack;
    let by_hedge = |m: &Mention, own: f64, other: f64| match m.hedge {
        Hedge::Exact => false,
        Hedge::About => (own - other).abs() <= 0.1 * own.abs() + slack,
        Hedge::AtLeast => other >= own - slack,
        Hedge::AtMost => other <= own + slack,
    };
    by_hedge(a, av, rv)
        || by_hedge(r, rv, av)
        || r.range.is_some_and(|range| within(range, av, factor))
        || a.range.is_some_and(|range| within(range, rv, 1.0))
}

/// A sum, difference, change or share computed from two source numbers (`up $300 million` from
/// $3.9 and $4.2 billion; `grew 7.7%`).
fn derived(a: &Mention, known: &[Mention]) -> bool {
    if matches!(a.kind, Kind::Year | Kind::Date { .. }) || a.value == 0.0 {
        return false;
    }
    // Pairs grow with the square of the numbers; a long context keeps its first 80.
    let pool: Vec<&Mention> = known.iter().filter(|r| !matches!(r.kind, Kind::Year | Kind::Date { .. })).take(80).collect();
    // Within the answer's own rounding, strictly: `3` is not 1.5 + 1 (2.5 may round either way).
    let slack = a.tolerance.max(0.005 * a.value.abs());
    let near = |v: f64| v.is_finite() && (v.abs() - a.value).abs() < slack;
    for (i, x) in pool.iter().enumerate() {
        for y in &pool[i + 1..] {
            // Both numbers must be about what `a` is about, or any two figures would do.
            // The same figure twice (the reference and the context both state it) derives nothing.
            if !comparable(x.kind, y.kind)
                || x.value == y.value
                || shared(&a.keywords, &x.keywords) == 0
                || shared(&a.keywords, &y.keywords) == 0
            {
                continue;
            }
            let same_footing = x.has_scale == y.has_scale;
            match a.kind {
                Kind::Percent => {
                    if matches!(x.kind, Kind::Amount { .. } | Kind::Measure(_)) && same_footing {
                        let changes = [(y.value - x.value) / x.value, (x.value - y.value) / y.value, x.value / y.value, y.value / x.value];
                        if changes.iter().any(|c| near(100.0 * c)) {
                            return true;
                        }
                    }
                }
                Kind::Points => {
                    if x.kind == Kind::Percent && y.kind == Kind::Percent && near(x.value - y.value) {
                        return true;
                    }
                }
                Kind::Multiple => {
                    if same_footing && (near(x.value / y.value) || near(y.value / x.value)) {
                        return true;
                    }
                }
                _ => {
                    if comparable(a.kind, x.kind) && same_footing && (near(x.value - y.value) || near(x.value + y.value)) {
                        return true;
                    }
                }
            }
        }
    }
    false
}

#[cfg(test)]
mod tests;
