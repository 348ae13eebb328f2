//! Finding the numbers a text states, each with what it measures: its value in a base unit
//! (scale words and units applied: `$4.2 billion`, `4,200 million` and `$4,200,000,000` are all
//! 4.2e9 dollars), its kind (an amount of money or a count, a percentage, percentage points, a
//! measure, a multiple, a year, a date), how precisely it was written (`4.2 billion` is
//! 4.2e9 ± 0.05e9), its sign or direction (`(1,234)`, `-5%`, `fell 5%`), a hedge (`about`,
//! `more than`); ranges share their unit (`5-10%`). Dates are read first (`dates.rs`), the
//! key words that say *which* quantity a number is last (`context.rs`).
//!
//! Digits that are not quantities are skipped: identifiers (`Q3`, `FY2023`, `COVID-19`,
//! `10-K`), list numbering (`1.` at a line start), footnote marks (`revenue1`, `[3]`),
//! references (`page 12`, `Note 7`), ordinals, times, fractions and version numbers.

use super::context::add_context;
use super::dates::find_dates;
pub use super::mention::{Direction, Hedge, Kind, Mention};
use super::scan::{at, before, is_alpha, is_digit, is_space, token_end, word_before, word_end, words_before};
use super::units::{
    attached_scale, attached_unit, code_before_figure, currency_sign, currency_word, dollar_prefix, minor_currency, month,
    scale_word, spelled_number, unit_word, OTHER_DOLLAR, US_CENT,
};

/// Every quantity `text` states, in order.
pub fn find_mentions(text: &str) -> Vec<Mention> {
    let chars: Vec<char> = text.chars().collect();
    let (mut mentions, date_spans) = find_dates(&chars);
    let mut covered = vec![false; chars.len()];
    for (start, end) in date_spans {
        covered[start..end].fill(true);
    }
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if covered[i] {
            i += 1;
        } else if c.is_ascii_digit() {
            let (mention, next) = read_number(&chars, i);
            mentions.extend(mention);
            i = next.max(i + 1);
        } else if c.is_alphabetic() {
            let end = word_end(&chars, i);
            if i == 0 || !chars[i - 1].is_alphanumeric() {
                mentions.extend(read_spelled(&chars, i, end));
            }
            i = end.max(i + 1);
        } else {
            i += 1;
        }
    }
    mentions.sort_by_key(|m| m.start);
    join_ranges(&chars, &mut mentions);
    add_context(&chars, &mut mentions);
    mentions
}

/// The word right before `k` (one space between) is capitalised and is not the first word of
/// its sentence or line.
fn capitalised_name_before(chars: &[char], k: usize) -> bool {
    if !is_space(before(chars, k, 1)) {
        return false;
    }
    let end = k - 1;
    let mut start = end;
    while is_alpha(before(chars, start, 1)) {
        start -= 1;
    }
    if start == end || !chars[start].is_uppercase() {
        return false;
    }
    let word: String = chars[start..end].iter().collect();
    if month(&word).is_some() || currency_word(&word).is_some() {
        return false;
    }
    // The character before the word: a sentence or line start makes it an ordinary word.
    let mut b = start;
    while is_space(before(chars, b, 1)) {
        b -= 1;
    }
    !matches!(before(chars, b, 1), None | Some('.' | '!' | '?' | '\n' | ':' | ';' | '*' | '-' | '#' | '|' | '(' | '"'))
}

/// Words that name a numbered thing rather than a quantity: `page 12`, `Note 7`, `Item 1A`.
const LABEL_WORDS: &[&str] = &[
    "page", "pages", "p", "pp", "note", "notes", "item", "items", "section", "sections", "chapter",
    "chapters", "figure", "fig", "table", "tables", "exhibit", "appendix", "part", "article", "rule",
    "form", "schedule", "step", "steps", "line", "lines", "no", "number", "version", "v", "level",
    "tier", "phase", "class", "chart", "slide", "paragraph", "clause", "title", "model", "question",
    "example", "option", "volume", "vol", "issue", "row", "column", "box", "category", "stage",
    "footnote", "ch", "sec", "art", "subsection", "pillar", "goal", "priority", "division",
];

/// What follows the digits: scale, unit, percent, currency; and where the mention ends.
#[derive(Debug, Default)]
struct Suffix {
    end: usize,
    scale: Option<f64>,
    /// Kind and factor set by a unit, `%`, points or `x`.
    kind: Option<(Kind, f64)>,
    currency: Option<&'static str>,
}

/// Reads scale words, units, percent and currency words written after the number, from `k`.
/// None when the letters glued to the digits make an identifier (`3D`, `10-K`).
fn read_suffix(chars: &[char], mut k: usize, currency: Option<&'static str>) -> Option<Suffix> {
    let mut suffix = Suffix { end: k, currency, ..Suffix::default() };
    // Glued to the digits: %, ×, letters (`bn`, `k`, `kg`, `x`, `pp`), or `-year`.
    match at(chars, k) {
        Some('%' | '％') => {
            suffix.kind = Some((Kind::Percent, 1.0));
            suffix.end = k + 1;
            return Some(suffix);
        }
        Some('×') => {
            suffix.kind = Some((Kind::Multiple, 1.0));
            suffix.end = k + 1;
            return Some(suffix);
        }
        Some('¢') if currency.is_none() => {
            return Some(in_hundredths(suffix, US_CENT, k + 1));
        }
        Some(c) if c.is_alphabetic() => {
            let mut end = k;
            while is_alpha(at(chars, end)) {
                end += 1;
            }
            if is_digit(at(chars, end)) || at(chars, end) == Some('_') {
                return None;
            }
            let glued: String = chars[k..end].iter().collect();
            if matches!(glued.to_lowercase().as_str(), "st" | "nd" | "rd" | "th") {
                return None;
            }
            // `45.2p` is pence (earnings and dividends per share); `10p.m.` is a time and
            // `1080p` a video's lines.
            if let Some(minor) = minor_currency(&glued) {
                if currency.is_none() && at(chars, end) != Some('.') && !video_lines(chars, k) {
                    return Some(in_hundredths(suffix, minor, end));
                }
            }
            if glued == "x" || glued == "X" {
                suffix.kind = Some((Kind::Multiple, 1.0));
            } else if glued == "pp" || glued == "ppt" || glued == "ppts" {
                suffix.kind = Some((Kind::Points, 1.0));
            } else if glued == "bps" || glued == "bp" {
                suffix.kind = Some((Kind::Points, 0.01));
            } else if let Some(scale) = attached_scale(&glued, currency.is_some()) {
                suffix.scale = Some(scale);
            } else if let Some(unit) = attached_unit(&glued) {
                suffix.kind = Some((Kind::Measure(unit.dimension), unit.factor));
            } else {
                return None;
            }
            k = end;
            suffix.end = end;
        }
        Some('-' | '‑') if is_alpha(at(chars, k + 1)) => {
            let end = word_end(chars, k + 1);
            let word: String = chars[k + 1..end].iter().collect();
            let unit = unit_word(&word)?;
            suffix.kind = Some((Kind::Measure(unit.dimension), unit.factor));
            suffix.end = end;
            return Some(suffix);
        }
        Some('°') => {
            let dimension = match at(chars, k + 1) {
                Some('C') => "celsius",
                Some('F') => "fahrenheit",
                _ => "degrees",
            };
            suffix.kind = Some((Kind::Measure(dimension), 1.0));
            suffix.end = k + 1 + usize::from(dimension != "degrees");
            return Some(suffix);
        }
        _ => {}
    }
    // Words written apart: scale, then percent / points / times / currency / unit.
    let next_word = |from: usize| -> Option<(String, usize)> {
        let mut s = from;
        if !is_space(at(chars, s)) {
            return None;
        }
        while is_space(at(chars, s)) {
            s += 1;
        }
        let e = word_end(chars, s);
        (e > s).then(|| (chars[s..e].iter().collect(), e))
    };
    if suffix.scale.is_none() {
        if let Some((word, end)) = next_word(k) {
            let capital_scale = match word.as_str() {
                "M" | "MM" if currency.is_some() => Some(1e6),
                "B" if currency.is_some() => Some(1e9),
                "K" if currency.is_some() => Some(1e3),
                _ => None,
            };
            if let Some(scale) = scale_word(&word).or(capital_scale) {
                suffix.scale = Some(scale);
                k = end;
                suffix.end = end;
            }
        }
    }
    if suffix.kind.is_some() {
        return Some(suffix);
    }
    // `20 °C`, `12 %`: a sign after a space.
    if is_space(at(chars, k)) && at(chars, k + 1) == Some('°') {
        if let Some(mut spaced) = read_suffix(chars, k + 1, currency) {
            spaced.scale = suffix.scale;
            return Some(spaced);
        }
    }
    if is_space(at(chars, k)) && at(chars, k + 1) == Some('%') {
        suffix.kind = Some((Kind::Percent, 1.0));
        suffix.end = k + 2;
        return Some(suffix);
    }
    let Some((word, end)) = next_word(k) else { return Some(suffix) };
    let lower = word.to_lowercase();
    let following = next_word(end).map(|(w, e)| (w.to_lowercase(), e));
    match lower.as_str() {
        "percent" | "pct" | "percentage" => {
            if let Some((_, e)) = following.filter(|(w, _)| w == "point" || w == "points") {
                suffix.kind = Some((Kind::Points, 1.0));
                suffix.end = e;
            } else {
                suffix.kind = Some((Kind::Percent, 1.0));
                suffix.end = end;
            }
        }
        "per" if following.as_ref().is_some_and(|(w, _)| w == "cent") => {
            suffix.kind = Some((Kind::Percent, 1.0));
            suffix.end = following.map_or(end, |(_, e)| e);
        }
        "basis" if following.as_ref().is_some_and(|(w, _)| w == "points" || w == "point") => {
            suffix.kind = Some((Kind::Points, 0.01));
            suffix.end = following.map_or(end, |(_, e)| e);
        }
        "bps" | "bp" => {
            suffix.kind = Some((Kind::Points, 0.01));
            suffix.end = end;
        }
        "pp" | "ppt" | "ppts" => {
            suffix.kind = Some((Kind::Points, 1.0));
            suffix.end = end;
        }
        "times" => {
            suffix.kind = Some((Kind::Multiple, 1.0));
            suffix.end = end;
        }
        // Pounds after a scale word are money (`3.4 million pounds`), otherwise weight.
        "pounds" | "pound" if suffix.scale.is_some() && suffix.currency.is_none() => {
            suffix.currency = Some("GBP");
            suffix.end = end;
        }
        _ => {
            // A lone letter written apart is no currency's hundredth (`5 p. 12` is a page).
            if let Some(minor) = minor_currency(&lower).filter(|_| lower.len() > 1 && suffix.currency.is_none() && suffix.scale.is_none()) {
                return Some(in_hundredths(suffix, minor, end));
            }
            if let Some(code) = currency_word(&word) {
                if suffix.currency.is_none() {
                    suffix.currency = Some(code);
                    suffix.end = end;
                }
            } else if let Some(unit) = unit_word(&word)
                .or_else(|| attached_unit(&word))
                .or_else(|| (word == "m" && suffix.scale.is_none()).then(|| unit_word("metre")).flatten())
            {
                suffix.kind = Some((Kind::Measure(unit.dimension), unit.factor));
                suffix.end = end;
            }
        }
    }
    Some(suffix)
}

/// The integer written right before `k` is a video format's line count (`720p`, `1080p`).
fn video_lines(chars: &[char], k: usize) -> bool {
    let digits = chars[..k].iter().rev().take_while(|c| c.is_ascii_digit()).count();
    let written: String = chars[k - digits..k].iter().collect();
    before(chars, k - digits, 1) != Some('.')
        && matches!(written.as_str(), "144" | "240" | "360" | "480" | "540" | "576" | "720" | "1080" | "1440" | "2160" | "4320")
}

/// The suffix of a figure in a currency's hundredths (`45.2p`, `30 cents`), ending at `end`:
/// an amount in the main unit, so `45.2p` and `£0.452` are the same money.
fn in_hundredths(mut suffix: Suffix, (code, factor): (&'static str, f64), end: usize) -> Suffix {
    suffix.currency = Some(code);
    suffix.kind = Some((Kind::Amount { currency: Some(code) }, factor));
    suffix.end = end;
    suffix
}

/// Hedge and direction from the words right before the number.
fn hedge_and_direction(chars: &[char], start: usize) -> (Hedge, Option<Direction>) {
    let words = words_before(chars, start, 4);
    let w = |i: usize| words.get(i).map(String::as_str).unwrap_or("");
    let mut hedge = Hedge::Exact;
    let mut skip = 0;
    match (w(1), w(0)) {
        ("more" | "greater", "than") | ("at", "least") | ("upwards", "of") => (hedge, skip) = (Hedge::AtLeast, 2),
        ("less" | "fewer", "than") | ("at", "most") | ("up", "to") | ("no" | "not", "more") => {
            (hedge, skip) = (Hedge::AtMost, 2)
        }
        ("close", "to") => (hedge, skip) = (Hedge::About, 2),
        (_, "about" | "approximately" | "approx" | "around" | "nearly" | "almost" | "roughly" | "circa" | "some" | "estimated" | "est") => {
            (hedge, skip) = (Hedge::About, 1)
        }
        (_, "over" | "above" | "exceeding" | "beyond" | "topping") => (hedge, skip) = (Hedge::AtLeast, 1),
        (_, "under" | "below") => (hedge, skip) = (Hedge::AtMost, 1),
        _ => {}
    }
    if start > 0 && at(chars, start - 1) == Some('~') {
        hedge = Hedge::About;
    }
    let mut direction = None;
    for word in words.iter().skip(skip) {
        match word.as_str() {
            "by" | "of" | "a" | "an" | "some" | "about" | "approximately" | "nearly" | "roughly" | "almost" => continue,
            "increased" | "increase" | "increases" | "increasing" | "rose" | "rise" | "rises" | "risen" | "grew" | "grow"
            | "grows" | "growth" | "up" | "gained" | "gain" | "gains" | "higher" | "climbed" | "jumped" | "expanded" => {
                direction = Some(Direction::Up)
            }
            "decreased" | "decrease" | "decreases" | "decreasing" | "declined" | "decline" | "declines" | "fell"
            | "fall" | "falls" | "fallen" | "dropped" | "drop" | "drops" | "down" | "lower" | "reduced" | "reduction"
            | "shrank" | "contracted" | "slipped" => direction = Some(Direction::Down),
            _ => {}
        }
        break;
    }
    (hedge, direction)
}

/// Reads the number whose first digit is at `start`; returns it (None for digits that are not
/// a quantity) and where to go on reading.
fn read_number(chars: &[char], start: usize) -> (Option<Mention>, usize) {
    let skip = |from: usize| (None, token_end(chars, from));
    let prev = before(chars, start, 1);
    let prev2 = before(chars, start, 2);
    // Glued to letters (Q3, FY2023, H1), hyphenated to a word (COVID-19), or after a version
    // dot, slash or hash: an identifier or a fraction, not a quantity.
    if prev.is_some_and(|c| c.is_alphabetic() || c == '_' || c == '#')
        || (matches!(prev, Some('-' | '‑')) && (is_alpha(prev2) || matches!(prev2, Some('-' | '‑'))))
        || (matches!(prev, Some('.' | '/' | ':' | ',')) && prev2.is_some_and(char::is_alphanumeric))
    {
        return skip(start);
    }
    // The digits: thousands separated by commas, then decimals.
    let mut j = start;
    while is_digit(at(chars, j)) {
        j += 1;
    }
    let mut separated = false;
    if j - start <= 3 {
        while at(chars, j) == Some(',')
            && (1..=3).all(|d| is_digit(at(chars, j + d)))
            && !is_digit(at(chars, j + 4))
        {
            separated = true;
            j += 4;
        }
    }
    let mut decimals = 0;
    if at(chars, j) == Some('.') && is_digit(at(chars, j + 1)) {
        j += 1;
        while is_digit(at(chars, j)) {
            j += 1;
            decimals += 1;
        }
        // 1.2.3: a version number.
        if at(chars, j) == Some('.') && is_digit(at(chars, j + 1)) {
            return skip(start);
        }
    }
    // 10:30, 3/4, 1/2/2023, 3:1: times, fractions, slash dates and ratios.
    if matches!(at(chars, j), Some(':' | '/')) && is_digit(at(chars, j + 1)) {
        return skip(start);
    }
    let digits: String = chars[start..j].iter().filter(|c| **c != ',').collect();
    let Ok(number) = digits.parse::<f64>() else { return skip(start) };
    if !number.is_finite() {
        return skip(start);
    }
    let integer_digits = digits.split('.').next().unwrap_or("");
    let number_tolerance = if decimals > 0 {
        0.5 * 10f64.powi(-decimals)
    } else {
        // 4,200 may be 4,213 rounded: trailing zeros of a long integer are not significant.
        let zeros = integer_digits.chars().rev().take_while(|c| *c == '0').count();
        if integer_digits.len() >= 4 && zeros > 0 && zeros < integer_digits.len() {
            0.5 * 10f64.powi(zeros as i32)
        } else {
            0.5
        }
    };

    // Before the digits: sign, currency, an opening parenthesis.
    let mut q = start;
    let mut currency = None;
    let mut sign = None;
    let mut paren = false;
    for _ in 0..3 {
        match before(chars, q, 1) {
            Some('(') if !paren => {
                paren = true;
                q -= 1;
            }
            Some(c) if currency.is_none() && currency_sign(c).is_some() => {
                currency = currency_sign(c);
                q -= 1;
                let mut letters = q;
                while is_alpha(before(chars, letters, 1)) {
                    letters -= 1;
                }
                let code: String = chars[letters..q].iter().collect();
                if c == '$' && !code.is_empty() && !before(chars, letters, 1).is_some_and(char::is_alphanumeric) {
                    if let Some(dollar) = dollar_prefix(&code) {
                        currency = Some(dollar);
                        q = letters;
                    } else if code.len() <= 3 && code.chars().all(|l| l.is_ascii_uppercase()) {
                        // Capitals glued to `$` name some other dollar or real (`RD$`, `J$`):
                        // not USD, so never compared with `$` as the same money.
                        currency = Some(OTHER_DOLLAR);
                        q = letters;
                    }
                }
            }
            Some('-' | '−') if sign.is_none() && !before(chars, q, 2).is_some_and(char::is_alphanumeric) => {
                // `5 - 10`: a range, not a minus.
                let mut back = q - 1;
                while is_space(before(chars, back, 1)) {
                    back -= 1;
                }
                if back < q - 1 && before(chars, back, 1).is_some_and(|c| c.is_ascii_digit() || c == '%') {
                    break;
                }
                sign = Some(Direction::Down);
                q -= 1;
            }
            Some('+') if sign.is_none() => {
                sign = Some(Direction::Up);
                q -= 1;
            }
            _ => break,
        }
    }
    // A range's second end after a hyphen (`5-10`) carries no sign of its own.
    if currency.is_none() {
        if let Some(code) = word_before(chars, q).and_then(|w| code_before_figure(&w)) {
            currency = Some(code);
        }
    }
    // `page 12`, `Note 7`, `Item 1`: a label.
    if currency.is_none() {
        if let Some(word) = word_before(chars, q) {
            if LABEL_WORDS.contains(&word.as_str()) {
                return skip(start);
            }
        }
    }
    // `Summit Stove 2`, `AquaPure 500`, `Boeing 737`: a bare integer right after a capitalised
    // word inside a sentence is part of a name.
    let year_like = integer_digits.len() == 4 && (1800.0..=2100.0).contains(&number);
    if currency.is_none() && decimals == 0 && !separated && !year_like && !matches!(at(chars, j), Some('%' | '-' | ':')) && capitalised_name_before(chars, q) {
        // Pence are not a unit here: `Ridgeline 2p` is a name.
        let suffix_is_unit = read_suffix(chars, j, None)
            .is_some_and(|s| matches!(s.kind, Some((kind, _)) if !matches!(kind, Kind::Amount { .. })) || s.scale.is_some());
        if !suffix_is_unit {
            return skip(start);
        }
    }
    // [3]: a footnote or citation mark.
    if prev == Some('[') && at(chars, j) == Some(']') {
        return skip(start);
    }

    let Some(suffix) = read_suffix(chars, j, currency) else { return skip(start) };
    let mut end = suffix.end;
    let currency = suffix.currency;

    // `1.` or `2)` at the start of a line: list numbering.
    let plain_integer = decimals == 0 && !separated && currency.is_none() && suffix.kind.is_none() && suffix.scale.is_none();
    if plain_integer && matches!(at(chars, j), Some('.' | ')')) && (at(chars, j + 1).is_none_or(|c| c.is_whitespace())) {
        let mut line = q;
        while line > 0 && matches!(chars[line - 1], ' ' | '\t' | '-' | '*' | '•' | '>' | '#' | '(') {
            line -= 1;
        }
        if line == 0 || chars[line - 1] == '\n' {
            return (None, j + 1);
        }
    }
    // `(1,234)` is negative in accounts; `(3)` is an enumeration.
    if paren && at(chars, end) == Some(')') {
        if currency.is_some() || separated || decimals > 0 {
            sign = Some(Direction::Down);
            end += 1;
        } else if plain_integer && number < 100.0 {
            return (None, end + 1);
        }
    }
    if paren && sign != Some(Direction::Down) {
        // `(0.75` in prose: the parenthesis is punctuation, not part of the number.
        q = chars[q..start].iter().position(|c| *c == '(').map_or(q, |p| q + p + 1);
    }

    let scale = suffix.scale.unwrap_or(1.0);
    let (kind, factor) = match suffix.kind {
        Some(kind_and_factor) => kind_and_factor,
        None if currency.is_none() && suffix.scale.is_none() && decimals == 0 && !separated && integer_digits.len() == 4
            && (1800.0..=2100.0).contains(&number) =>
        {
            (Kind::Year, 1.0)
        }
        None => (Kind::Amount { currency }, 1.0),
    };
    let kind = match kind {
        Kind::Measure(_) | Kind::Percent | Kind::Points | Kind::Multiple if currency.is_some() => Kind::Amount { currency },
        other => other,
    };
    let (hedge, said) = hedge_and_direction(chars, q);
    let multiplier = scale * factor;
    let bare = sign.is_none() && currency.is_none() && suffix.scale.is_none() && suffix.kind.is_none();
    let mention = Mention {
        value: number * multiplier,
        tolerance: number_tolerance * multiplier,
        kind,
        direction: sign.or(said),
        hedge,
        has_scale: suffix.scale.is_some(),
        range: None,
        text: chars[q..end].iter().collect::<String>().trim().to_string(),
        start: q,
        end,
        keywords: Vec::new(),
        years: Vec::new(),
        tabular: false,
        noun: None,
        number,
        number_tolerance,
        multiplier,
        bare,
    };
    (Some(mention), end)
}

/// A spelled-out small number counts only with a unit, percent or scale after it (`five
/// seconds`, `three percent`, `two million`): `one of the` is not a quantity.
fn read_spelled(chars: &[char], start: usize, end: usize) -> Option<Mention> {
    let word: String = chars[start..end].iter().collect();
    let number = spelled_number(&word)?;
    let suffix = read_suffix(chars, end, None)?;
    let (kind, factor) = match (suffix.kind, suffix.scale, suffix.currency) {
        (Some(kind_and_factor), _, None) => kind_and_factor,
        (None, Some(_), currency) | (None, None, currency @ Some(_)) => (Kind::Amount { currency }, 1.0),
        _ => return None,
    };
    let multiplier = suffix.scale.unwrap_or(1.0) * factor;
    let (hedge, direction) = hedge_and_direction(chars, start);
    Some(Mention {
        value: number * multiplier,
        tolerance: 0.5 * multiplier,
        kind,
        direction,
        hedge,
        has_scale: suffix.scale.is_some(),
        range: None,
        text: chars[start..suffix.end].iter().collect(),
        start,
        end: suffix.end,
        keywords: Vec::new(),
        years: Vec::new(),
        tabular: false,
        noun: None,
        number,
        number_tolerance: 0.5,
        multiplier,
        bare: false,
    })
}

/// `5-10%`, `$3 to $4 billion`, `between 2 and 4 hours`: the bare first end takes the second
/// end's unit and scale, and both ends know the range.
fn join_ranges(chars: &[char], mentions: &mut Vec<Mention>) {
    let mut drop = vec![false; mentions.len()];
    for i in 1..mentions.len() {
        let (left, right) = mentions.split_at_mut(i);
        let a = &mut left[i - 1];
        let b = &mut right[0];
        if a.end > b.start {
            continue;
        }
        let between: String = chars[a.end..b.start].iter().collect::<String>().trim().to_lowercase();
        // `3 minutes 30 seconds`, `1 hour and 20 minutes`: one duration.
        if a.kind == Kind::Measure("time") && b.kind == Kind::Measure("time") && matches!(between.as_str(), "" | "and" | ",")
            && a.multiplier > b.multiplier && b.value < a.multiplier
        {
            a.value += b.value;
            a.tolerance = b.tolerance;
            a.end = b.end;
            a.text = chars[a.start..b.end].iter().collect();
            drop[i] = true;
            continue;
        }
        let joined = matches!(between.as_str(), "-" | "–" | "—" | "to" | "through")
            || (between == "and" && words_before(chars, a.start, 1).first().is_some_and(|w| w == "between"));
        if !joined {
            continue;
        }
        // 2020-22: the second end of a span of years.
        if a.kind == Kind::Year && b.bare && b.text.len() == 2 {
            drop[i] = true;
            continue;
        }
        let same_amount_scale = matches!((a.kind, b.kind), (Kind::Amount { .. }, Kind::Amount { .. })) && !a.has_scale && b.has_scale;
        if (a.bare && !b.bare) || same_amount_scale {
            a.kind = match (a.kind, b.kind) {
                (Kind::Amount { currency: Some(c) }, Kind::Amount { .. }) => Kind::Amount { currency: Some(c) },
                (_, kind) => kind,
            };
            a.multiplier = b.multiplier;
            a.value = a.number * a.multiplier;
            a.tolerance = a.number_tolerance * a.multiplier;
            a.has_scale = b.has_scale;
            a.bare = false;
        }
        if a.kind == b.kind || matches!((a.kind, b.kind), (Kind::Amount { .. }, Kind::Amount { .. })) {
            let range = (a.value.min(b.value), a.value.max(b.value));
            a.range = Some(range);
            b.range = Some(range);
        }
    }
    let mut index = 0;
    mentions.retain(|_| {
        index += 1;
        !drop[index - 1]
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Mention {
        let found = find_mentions(text);
        assert_eq!(found.len(), 1, "{text}: {found:#?}");
        found.into_iter().next().unwrap_or_else(|| unreachable!())
    }

    fn values(text: &str) -> Vec<(String, f64)> {
        find_mentions(text).into_iter().map(|m| (m.text, m.value)).collect()
    }

    #[test]
    fn scales_and_currencies_give_one_value() {
        for text in ["$4.2 billion", "4,200 million", "$4,200,000,000", "US$4.2bn", "$4.2B", "USD 4.2 billion"] {
            let m = one(text);
            assert!((m.value - 4.2e9).abs() < 1.0, "{text}: {}", m.value);
            assert!(matches!(m.kind, Kind::Amount { .. }), "{text}");
        }
        assert_eq!(one("$4.2 billion").kind, Kind::Amount { currency: Some("USD") });
        assert_eq!(one("€12m").value, 12e6);
        assert_eq!(one("12k employees").value, 12e3);
        assert!((one("$4.2 billion").tolerance - 0.05e9).abs() < 1.0);
        assert!((one("4,200 million").tolerance - 50e6).abs() < 1.0, "trailing zeros are rounding");
    }

    #[test]
    fn other_reporting_conventions_give_their_currency_and_scale() {
        for text in ["₹4,200 crore", "Rs. 4,200 crore", "Rs 4,200 crores", "INR 4,200 crore", "₹420,000 lakh"] {
            let m = one(text);
            assert!((m.value - 4.2e10).abs() < 1.0, "{text}: {}", m.value);
            assert_eq!(m.kind, Kind::Amount { currency: Some("INR") }, "{text}");
        }
        assert_eq!(one("RMB 12.3 billion").kind, Kind::Amount { currency: Some("CNY") });
        assert_eq!(one("12.3 billion renminbi").kind, Kind::Amount { currency: Some("CNY") });
        assert_eq!(one("SEK 850 million").kind, Kind::Amount { currency: Some("SEK") });
        assert_eq!(one("R$4.2 billion").kind, Kind::Amount { currency: Some("BRL") });
        // Capitals the table does not know still name some other dollar, never the US one.
        assert_eq!(one("RD$4.2 billion").kind, Kind::Amount { currency: Some(OTHER_DOLLAR) });
        assert_eq!(one("costs$5").kind, Kind::Amount { currency: Some("USD") }, "a word run into `$` is no currency name");
    }

    #[test]
    fn a_hedge_abbreviated_with_a_period_is_still_a_hedge() {
        for text in ["approx. $4.2 billion", "est. 5,000 crore", "approx 12%"] {
            assert_eq!(one(text).hedge, Hedge::About, "{text}");
        }
        assert_eq!(one("It ended. 12%").hedge, Hedge::Exact, "a sentence's period is no abbreviation");
    }

    #[test]
    fn percentages_points_multiples_and_measures() {
        assert_eq!(one("12%").kind, Kind::Percent);
        assert_eq!(one("12 percent").kind, Kind::Percent);
        assert_eq!(one("12 per cent").kind, Kind::Percent);
        let points = one("150 basis points");
        assert_eq!((points.kind, points.value), (Kind::Points, 1.5));
        assert_eq!(one("2.5 percentage points").kind, Kind::Points);
        assert_eq!(one("3x").kind, Kind::Multiple);
        let minutes = one("90 minutes");
        assert_eq!((minutes.kind, minutes.value), (Kind::Measure("time"), 5_400.0));
        assert_eq!(one("a 3-year plan").value, 3.0 * 365.25 * 86_400.0);
        assert_eq!(one("five seconds").value, 5.0);
        assert_eq!(one("20°C").kind, Kind::Measure("celsius"));
    }

    #[test]
    fn signs_directions_and_hedges() {
        assert_eq!(one("(1,234)").direction, Some(Direction::Down));
        assert_eq!(one("($5.1 million)").direction, Some(Direction::Down));
        assert_eq!(one("-5%").direction, Some(Direction::Down));
        assert_eq!(one("sales decreased by 5%").direction, Some(Direction::Down));
        assert_eq!(one("sales rose 5%").direction, Some(Direction::Up));
        assert_eq!(one("rose to $5 billion").direction, None, "`to` names a level");
        assert_eq!(one("more than 2,000 stores").hedge, Hedge::AtLeast);
        assert_eq!(one("up to 30 days").hedge, Hedge::AtMost);
        assert_eq!(one("approximately 4,000 people").hedge, Hedge::About);
    }

    #[test]
    fn dates_are_one_value_however_written() {
        let dates: Vec<f64> = ["March 3, 2023", "3 March 2023", "2023-03-03", "Mar. 3rd 2023"]
            .iter()
            .map(|t| one(t).value)
            .collect();
        assert!(dates.iter().all(|d| *d == 20_230_303.0), "{dates:?}");
        assert_eq!(one("in March 2023").kind, Kind::Date { has_day: false });
        assert_eq!(one("in 2023").kind, Kind::Year);
        assert!(find_mentions("on March 3 we met").is_empty());
        assert_eq!(one("you may 3x it").kind, Kind::Multiple, "`may` is not a month");
    }

    #[test]
    fn digits_that_are_not_quantities_are_skipped() {
        for text in [
            "Q3", "FY2023", "COVID-19", "Form 10-K", "see page 12", "Note 7", "Item 1A", "H1", "the 3rd",
            "version 1.2.3", "at 10:30", "3/4 of", "revenue[2]", "[3]", "3D", "Section 404",
        ] {
            assert!(find_mentions(text).is_empty(), "{text}: {:?}", values(text));
        }
        assert_eq!(values("1. Revenue was $5 billion.\n2. Margin 12%"), [
            ("$5 billion".to_string(), 5e9),
            ("12%".to_string(), 12.0)
        ]);
        assert_eq!(values("revenue1 of $5 billion").len(), 1, "footnote mark glued to a word");
    }

    #[test]
    fn ranges_share_their_unit() {
        let found = find_mentions("5-10%");
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].kind, Kind::Percent);
        assert_eq!(found[0].range, Some((5.0, 10.0)));
        let found = find_mentions("$3 to $4 billion");
        assert_eq!(found[0].value, 3e9);
        let found = find_mentions("between 2 and 4 hours");
        assert_eq!(found[0].value, 7_200.0);
        let years = find_mentions("in 2020-22 the plan");
        assert_eq!(years.len(), 1);
        let duration = one("boils in 3 minutes 30 seconds");
        assert_eq!((duration.value, duration.text.as_str()), (210.0, "3 minutes 30 seconds"));
    }

    #[test]
    fn names_with_numbers_are_not_quantities() {
        assert!(find_mentions("The Summit Stove 2 and the AquaPure 500 filter").is_empty());
        assert_eq!(one("Summit Stove 2 weighs 350 g").value, 350.0);
        assert_eq!(one("In Fiscal 2023 sales were flat").kind, Kind::Year, "years stay years");
        assert!(find_mentions("-adobe-times-medium-r-normal--10-100-75-75-p-54").is_empty());
        let cold = one("works down to −20 °C");
        assert_eq!((cold.kind, cold.direction), (Kind::Measure("celsius"), Some(Direction::Down)));
        assert_eq!(one("(0.75 of the width)").text, "0.75", "a parenthesis in prose is not a sign");
    }

    #[test]
    fn key_words_and_years_say_which_quantity() {
        let found = find_mentions("In fiscal 2022, net revenues increased 12% to $31.8 billion.");
        let pct = found.iter().find(|m| m.kind == Kind::Percent).unwrap_or_else(|| unreachable!());
        assert!(pct.keywords.contains(&"revenue".to_string()), "{:?}", pct.keywords);
        assert_eq!(pct.years, [2022]);
        let labelled = find_mentions("FY2023 operating margin was 15%");
        assert_eq!(labelled.len(), 1);
        assert_eq!(labelled[0].years, [2023]);
        assert!(labelled[0].keywords.contains(&"margin".to_string()));
    }

    #[test]
    fn any_text_is_read_without_panicking() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let alphabet: Vec<char> = "0123456789 ,.-−–()$€£%×°kKmMbB\n:/[]#年éA-Za-z\u{a0}\u{202f}~+'’".chars().collect();
        for _ in 0..3_000 {
            let len = (seed % 40) as usize;
            let text: String = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    alphabet[(seed % alphabet.len() as u64) as usize]
                })
                .collect();
            for m in find_mentions(&text) {
                assert!(m.value.is_finite() && m.start <= m.end, "{text:?}");
            }
        }
        for text in ["", "$", "(", "-", "1,", "1.", "March", "March 99, 2023", "2023-13-45", "9".repeat(400).as_str()] {
            let _ = find_mentions(text);
        }
    }
}
