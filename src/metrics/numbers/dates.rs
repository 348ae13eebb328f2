//! Dates written out (`March 3, 2023`, `3 March 2023`, `March 2023`) or in ISO form
//! (`2023-03-03`), read before any other number so their digits are not read as amounts.

use super::mention::{Hedge, Kind, Mention};
use super::scan::{at, before, is_digit, is_space, word_end};
use super::units::month;

/// Dates: `March 3, 2023`, `3 March 2023`, `March 2023`, `2023-03-03`. Returns the dates and
/// every span read as a date (a `March 3` without a year is a span but no mention).
pub(super) fn find_dates(chars: &[char]) -> (Vec<Mention>, Vec<(usize, usize)>) {
    let mut dates = Vec::new();
    let mut spans = Vec::new();
    let digits_at = |k: usize| -> (usize, Option<u32>) {
        let mut e = k;
        while is_digit(at(chars, e)) && e - k < 5 {
            e += 1;
        }
        let value = chars[k..e].iter().collect::<String>().parse().ok();
        (e, value)
    };
    let skip_spaces = |mut k: usize| {
        while is_space(at(chars, k)) {
            k += 1;
        }
        k
    };
    let mut push = |start: usize, end: usize, y: u32, m: u32, d: Option<u32>| {
        let text: String = chars[start..end].iter().collect();
        let value = f64::from(y * 10_000 + m * 100 + d.unwrap_or(0));
        dates.push(Mention {
            value,
            tolerance: 0.0,
            kind: Kind::Date { has_day: d.is_some() },
            direction: None,
            hedge: Hedge::Exact,
            has_scale: false,
            range: None,
            text,
            start,
            end,
            keywords: Vec::new(),
            years: Vec::new(),
            tabular: false,
            noun: None,
            number: value,
            number_tolerance: 0.0,
            multiplier: 1.0,
            bare: false,
        });
    };
    let year_ok = |y: u32| (1800..=2100).contains(&y);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let boundary = i == 0 || !chars[i - 1].is_alphanumeric();
        // ISO 2023-03-03.
        if c.is_ascii_digit() && boundary {
            let (e, y) = digits_at(i);
            if e - i == 4 && at(chars, e) == Some('-') {
                let (e2, m) = digits_at(e + 1);
                if e2 - e == 3 && at(chars, e2) == Some('-') {
                    let (e3, d) = digits_at(e2 + 1);
                    if let (3, Some(y), Some(m), Some(d)) = (e3 - e2, y, m, d) {
                        if year_ok(y) && (1..=12).contains(&m) && (1..=31).contains(&d) && !is_digit(at(chars, e3)) {
                            push(i, e3, y, m, Some(d));
                            spans.push((i, e3));
                            i = e3;
                            continue;
                        }
                    }
                }
            }
            i = e.max(i + 1);
            continue;
        }
        if !(c.is_alphabetic() && boundary) {
            i += 1;
            continue;
        }
        let e = word_end(chars, i);
        let word: String = chars[i..e].iter().collect();
        // A capital letter: `may` is a verb, `May` a month.
        let Some(m) = month(&word).filter(|_| c.is_uppercase()) else {
            i = e;
            continue;
        };
        let mut after = e;
        if at(chars, after) == Some('.') {
            after += 1;
        }
        // `3 March 2023` (the day before the month).
        let mut day_before = None;
        let mut start = i;
        let mut b = i;
        while is_space(before(chars, b, 1)) {
            b -= 1;
        }
        if b < i {
            let mut ds = b;
            while is_digit(before(chars, ds, 1)) {
                ds -= 1;
            }
            if ds < b && b - ds <= 2 && !before(chars, ds, 1).is_some_and(char::is_alphanumeric) {
                let d: u32 = chars[ds..b].iter().collect::<String>().parse().unwrap_or(0);
                if (1..=31).contains(&d) {
                    day_before = Some(d);
                    start = ds;
                }
            }
        }
        let k = skip_spaces(after);
        let (k_end, first) = digits_at(k);
        let mut done = false;
        if k_end > k && k > after {
            let first_len = k_end - k;
            match first {
                Some(y) if first_len == 4 && year_ok(y) && !is_digit(at(chars, k_end)) => {
                    push(start, k_end, y, m, day_before);
                    spans.push((start, k_end));
                    i = k_end;
                    done = true;
                }
                Some(d) if first_len <= 2 && (1..=31).contains(&d) && day_before.is_none() => {
                    // `March 3, 2023` / `March 3rd 2023` / `March 3` (no year: covered only).
                    let mut k2 = k_end;
                    if chars.get(k2..k2 + 2).is_some_and(|s| {
                        let s: String = s.iter().collect::<String>().to_lowercase();
                        matches!(s.as_str(), "st" | "nd" | "rd" | "th")
                    }) {
                        k2 += 2;
                    }
                    let day_end = k2;
                    if at(chars, k2) == Some(',') {
                        k2 += 1;
                    }
                    let k3 = skip_spaces(k2);
                    let (k3_end, year) = digits_at(k3);
                    match year {
                        Some(y) if k3_end - k3 == 4 && year_ok(y) && !is_digit(at(chars, k3_end)) => {
                            push(start, k3_end, y, m, Some(d));
                            spans.push((start, k3_end));
                            i = k3_end;
                        }
                        _ => {
                            spans.push((start, day_end));
                            i = day_end;
                        }
                    }
                    done = true;
                }
                _ => {}
            }
        }
        if !done {
            i = e;
        }
    }
    (dates, spans)
}
