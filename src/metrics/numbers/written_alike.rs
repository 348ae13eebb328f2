//! Numbers written alike for word overlap: a number of the answer that states the same value
//! as a number of the reference, written another way, is rewritten as the reference writes it,
//! so the lexical members of a jury (ROUGE-L, token F1, `statement_overlap`) see the same fact
//! as the same words, and the judge model reads it as the same figure (the judges' prompts
//! are built from these texts). `4,200 million dollars`, `USD 4.2bn` and `$4,200,000,000` against a
//! reference's `$4.2 billion`; `3.5 percent` and `3.5 per cent` against `3.5%`; `50 bps`
//! against `0.5 percentage points`; `-1,234` against `(1,234)`; `four days` and `4-day`
//! against `4 days`. Abbreviated periods are spelled out on both sides first (`FY2023` reads
//! `fiscal year 2023`, `Q3` `third quarter`, `H1` `first half`).
//!
//! Why the reference's own writing and not one canonical token per quantity: a token such as
//! `4200000000usd` also rewrites every figure the two sides already wrote alike, which weighs
//! each number as one word where it was two or three, and on the four long-answer sets that
//! alone lowered the lexical members' agreement with the claim-level reference (token F1 0.722
//! to 0.714 on average, `statement_overlap` 0.711 to 0.686; docs/judges.md). Written as the
//! reference writes them, texts whose numbers already match are left exactly as they were.
//!
//! "The same value" is strict: the same kind on the same footing (both scaled or neither, unless
//! both are sums of money), equal,
//! or within the rounding of the coarser one when that is a rounded figure (`$4.2 billion` and
//! `4,213 million`); a small exact-looking figure is not another one rounded (`1 L` is not
//! `1.3 L`, `12%` is not `12.4%`), and a number inside a range or a hedge is not its end.
//! A number the reference does not state is left as written. Only the comparison text changes;
//! nothing here scores.

use super::parse::{find_mentions, Kind, Mention};
use super::units::code_before_figure;
use super::comparable;

/// `answer` and `reference` with abbreviated periods spelled out, and each number of the answer
/// that states the same value as a number of the reference written as the reference writes it.
pub fn written_as_the_reference(answer: &str, reference: &str) -> (String, String) {
    let (answer, reference) = (spelled_periods(answer), spelled_periods(reference));
    let reference_chars: Vec<char> = reference.chars().collect();
    let reference_mentions = find_mentions(&reference);
    let answer_mentions = find_mentions(&answer);
    let answer_chars: Vec<char> = answer.chars().collect();
    let out = rewrite(&answer, &answer_mentions, |a| {
        let own: String = answer_chars[with_currency_code(&answer_chars, a)..a.end].iter().collect();
        // A reference number of the same kind written to the same precision wins a tie with one
        // merely within rounding.
        // A sign written on one side only stays as the answer wrote it: `fell 3%` read as
        // `fell -3%`, or `1,234` as `(1,234)`, would change what the answer says.
        let agreeing = reference_mentions.iter().filter(|r| same_value(a, r) && signed(r) == signed(a));
        let mut best: Option<&Mention> = None;
        for r in agreeing {
            if token(r) == token(a) {
                best = Some(r);
                break;
            }
            best = best.or(Some(r));
        }
        best.map_or(own, |r| reference_chars[with_currency_code(&reference_chars, r)..r.end].iter().collect())
    });
    (out, reference)
}

/// The two state the same value: comparable kinds on the same footing (both scaled or neither),
/// and apart by no more than the coarser one's rounding (`$4.2 billion` and `4,213 million`;
/// `12%` and `12.4%`; not `0.14` and `0.15`). Stricter than the check's agreement, which also
/// lets a number fall inside a range or a hedge (`3` is within `1 to 20`, and is not `1`).
fn same_value(a: &Mention, r: &Mention) -> bool {
    // A scale written on one side only compares as a value when both are sums of money
    // (`$4,200,000,000` is `$4.2 billion`); a bare figure may be a table's `in millions`.
    let both_money = matches!((a.kind, r.kind), (Kind::Amount { currency: Some(_) }, Kind::Amount { currency: Some(_) }));
    if !comparable(a.kind, r.kind) || (a.has_scale != r.has_scale && !both_money) {
        return false;
    }
    if matches!(a.kind, Kind::Year | Kind::Date { .. }) || matches!(r.kind, Kind::Year | Kind::Date { .. }) {
        return a.kind == r.kind && a.value == r.value;
    }
    let diff = (a.value - r.value).abs();
    if diff <= 1e-12 * a.value.abs().max(r.value.abs()) {
        return true;
    }
    // Within the coarser one's rounding, when that one is a rounded figure (`4.2 billion`, within
    // 2% of its value), not a small exact count (`1 L` is not `1.3 L`; `12%` is not `12.4%`).
    let coarser = if a.tolerance >= r.tolerance { a } else { r };
    diff <= coarser.tolerance * (1.0 - 1e-9) && coarser.tolerance <= 0.02 * coarser.value.abs()
}

/// The mention's own text writes a sign (`-3%`, `−3%`, `+3%`, `(1,234)`, `$(1,234) million`),
/// rather than a word saying which way it went or none.
fn signed(m: &Mention) -> bool {
    m.text.chars().take_while(|c| !c.is_ascii_digit()).any(|c| matches!(c, '-' | '−' | '+' | '('))
}

/// `text` with each mention's characters replaced by `token_of(mention)`, spaced off from its
/// neighbours so the token stays one word.
fn rewrite(text: &str, mentions: &[Mention], token_of: impl Fn(&Mention) -> String) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut next = 0;
    for m in mentions {
        // Mentions come sorted and apart; one that overlaps what is already written is left as text.
        let start = with_currency_code(&chars, m);
        if start < next || m.end > chars.len() || start >= m.end {
            continue;
        }
        out.extend(&chars[next..start]);
        // A space only where the token would otherwise run into a word (`US$4.2bn` → `US 4200000000usd`):
        // spaces before punctuation would change where statements split.
        if start > 0 && chars[start - 1].is_alphanumeric() {
            out.push(' ');
        }
        out.push_str(&token_of(m));
        if chars.get(m.end).is_some_and(|c| c.is_alphanumeric()) {
            out.push(' ');
        }
        next = m.end;
    }
    out.extend(&chars[next.min(chars.len())..]);
    out
}

/// Where the mention starts once a currency code written before it (`USD 4.2bn`, `RMB 12.3
/// billion`, `Rs. 4,200 crore`, which the parser reads as the currency but leaves outside the
/// mention's text) is counted in: replaced with the number, it cannot stay beside the
/// reference's own writing of the currency (`RMB 12.3 billion yuan`).
fn with_currency_code(chars: &[char], m: &Mention) -> usize {
    let Kind::Amount { currency: Some(code) } = m.kind else { return m.start };
    let mut end = m.start;
    while end > 0 && chars[end - 1] == ' ' {
        end -= 1;
    }
    let word_end = if end > 0 && chars[end - 1] == '.' { end - 1 } else { end };
    let mut start = word_end;
    while start > 0 && chars[start - 1].is_alphabetic() {
        start -= 1;
    }
    let word: String = chars[start..word_end].iter().collect();
    // The parser's own reading of a code before a figure; only `Rs` is written with a period.
    let names_the_currency = code_before_figure(&word) == Some(code);
    if start < word_end && names_the_currency && (word_end == end || word.eq_ignore_ascii_case("rs")) {
        start
    } else {
        m.start
    }
}

/// A key for one quantity, equal for the same value written to the same precision: its value at the precision written, `.` as `p`, then
/// its kind (`usd`, `pct`, `pts`, a measure's dimension, `x`; nothing for a count or a year).
fn token(m: &Mention) -> String {
    let kind = match m.kind {
        Kind::Amount { currency } => currency.unwrap_or("").to_lowercase(),
        Kind::Percent => "pct".into(),
        Kind::Points => "pts".into(),
        Kind::Measure(dimension) => dimension.chars().filter(char::is_ascii_alphanumeric).collect(),
        Kind::Multiple => "x".into(),
        Kind::Year => String::new(),
        Kind::Date { .. } => return format!("d{}", m.value as u64),
    };
    format!("{}{kind}", digits_at_precision(m.value, m.tolerance))
}

/// `value` rounded to the last digit its `tolerance` (half a unit of that digit) allows,
/// without trailing decimal zeros, `.` written `p`: 4.2e9 ± 5e7 is `4200000000`, 3.50 ± 0.005 is
/// `3p5`.
fn digits_at_precision(value: f64, tolerance: f64) -> String {
    let decimals = if tolerance > 0.0 && tolerance < 0.5 {
        ((-(2.0 * tolerance).log10()).ceil() as usize).min(12)
    } else {
        0
    };
    let mut text = format!("{:.*}", decimals, value.abs());
    if text.contains('.') {
        text = text.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    text.replace('.', "p")
}

const ORDINALS: [&str; 4] = ["first", "second", "third", "fourth"];

/// Abbreviated fiscal periods spelled out as words: `FY2023`/`FY23`/`FY 2023` → `fiscal year
/// 2023`, `Q3`/`3Q` → `third quarter` (`3Q23` → `third quarter 2023`), `H1`/`1H` → `first
/// half`, `3rd quarter` → `third quarter`, `fiscal 2023` → `fiscal year 2023`. Other words are
/// kept as written.
fn spelled_periods(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut word = String::new();
    let mut chars = text.chars().peekable();
    let (mut after_fy, mut after_fiscal) = (false, false);
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() {
            word.push(c);
            if chars.peek().is_some_and(|n| n.is_alphanumeric()) {
                continue;
            }
            let spelled = spelled_period(&word, after_fy);
            let year = word.len() == 4 && word.chars().all(|c| c.is_ascii_digit());
            let kept = spelled.is_none();
            match spelled {
                Some(s) => out.push_str(&s),
                // A lone `FY` before a year: the year that follows is spelled with it.
                None if word.eq_ignore_ascii_case("fy") => out.push_str("fiscal year"),
                // `fiscal 2023` is `fiscal year 2023`.
                None if after_fiscal && year => out.push_str(&format!("year {word}")),
                None => out.push_str(&word),
            }
            after_fy = kept && word.eq_ignore_ascii_case("fy");
            after_fiscal = word.eq_ignore_ascii_case("fiscal");
            word.clear();
        } else {
            if !c.is_whitespace() {
                (after_fy, after_fiscal) = (false, false);
            }
            out.push(c);
        }
    }
    out
}

/// One word's spelling as a period, or None when it is not an abbreviated period.
fn spelled_period(word: &str, after_fy: bool) -> Option<String> {
    let lower = word.to_lowercase();
    let year = |digits: &str| match digits.len() {
        2 => Some(format!("20{digits}")),
        4 => Some(digits.to_string()),
        _ => None,
    };
    let all_digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    if after_fy && all_digits(&lower) {
        return year(&lower);
    }
    if let Some(digits) = lower.strip_prefix("fy").filter(|d| all_digits(d)) {
        return year(digits).map(|y| format!("fiscal year {y}"));
    }
    let ordinal = |d: char| d.to_digit(10).filter(|n| (1..=4).contains(n)).map(|n| ORDINALS[n as usize - 1]);
    // Q3, q3, 3Q, 3Q23, Q3'23 is not one word (the apostrophe ends it).
    let quarter = |rest: &str, d: char| -> Option<String> {
        let q = ordinal(d)?;
        match rest {
            "" => Some(format!("{q} quarter")),
            r if all_digits(r) => year(r).map(|y| format!("{q} quarter {y}")),
            _ => None,
        }
    };
    let mut cs = lower.chars();
    match (cs.next(), cs.next()) {
        (Some('q'), Some(d)) if d.is_ascii_digit() => return quarter(&lower[2..], d),
        (Some(d), Some('q')) if d.is_ascii_digit() => return quarter(&lower[2..], d),
        _ => {}
    }
    // Halves only in capitals (`H1`, `1H`): a lowercase `h1` is more often markup.
    match word {
        "H1" | "1H" => return Some("first half".into()),
        "H2" | "2H" => return Some("second half".into()),
        _ => {}
    }
    // `3rd` before `quarter` is spelled by its own word; ordinals 1st..4th are spelled always.
    match lower.as_str() {
        "1st" => Some("first".into()),
        "2nd" => Some("second".into()),
        "3rd" => Some("third".into()),
        "4th" => Some("fourth".into()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answer as rewritten against `reference`, spaces collapsed.
    fn against(answer: &str, reference: &str) -> String {
        written_as_the_reference(answer, reference).0.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn the_same_quantity_in_another_scale_unit_or_sign_is_written_as_the_reference_writes_it() {
        let reference = "Revenue was $4.2 billion, margin 3.5%, down 50 basis points; a loss of (1,234.5).";
        for written in ["$4,200 million", "4.2 billion dollars", "USD 4.2bn", "$4,200,000,000", "4,213 million dollars"] {
            assert_eq!(against(&format!("Revenue was {written}."), reference), "Revenue was $4.2 billion.", "{written}");
        }
        for written in ["3.5 percent", "3.5 per cent", "3.50%"] {
            assert_eq!(against(&format!("margin {written}"), reference), "margin 3.5%", "{written}");
        }
        assert_eq!(against("down 0.5 percentage points", reference), "down 50 basis points");
        for written in ["-1,234.5", "−1,234.5"] {
            assert_eq!(against(&format!("a loss of {written}"), reference), "a loss of (1,234.5)", "{written}");
        }
        assert_eq!(against("it keeps ice for four days", "Up to 4 days."), "it keeps ice for 4 days");
        // The reference itself is only spelled out, never rewritten.
        assert_eq!(written_as_the_reference("x", reference).1, reference);
    }

    #[test]
    fn currencies_and_scales_of_other_conventions_are_written_as_the_reference_writes_them() {
        let rupees = "Revenue was ₹42 billion.";
        for written in ["₹4,200 crore", "Rs. 4,200 crore", "INR 4,200 crore", "4,200 crore rupees"] {
            assert_eq!(against(&format!("Revenue was {written}."), rupees), rupees, "{written}");
        }
        // The code before the number goes with it: the reference's `yuan` is not written twice.
        for written in ["RMB 12.3 billion", "rmb 12.3 billion", "CNY 12.3bn"] {
            assert_eq!(against(&format!("Revenue was {written}."), "Revenue was 12.3 billion yuan."), "Revenue was 12.3 billion yuan.", "{written}");
        }
        // Other money at the same figure is another amount.
        for answer in ["Revenue was R$4.2 billion.", "Revenue was RD$4.2 billion.", "Revenue was HK$4.2 billion.", "Revenue was SEK 4.2 billion."] {
            assert_eq!(against(answer, "Revenue was $4.2 billion."), answer);
        }
    }

    #[test]
    fn a_sign_written_on_one_side_only_stays_as_the_answer_wrote_it() {
        // Read as the reference writes it, each would say another thing: a double negative, a
        // loss the answer did not state, a fall made a rise.
        for (answer, reference) in [
            ("revenue fell 3 percent", "-3%"),
            ("revenue rose 3 percent", "-3%"),
            ("growth was -3 percent", "a decline of 3%"),
            ("net income was 1234.5", "net income was (1,234.5)"),
            ("cash flow of 1,234 million dollars", "cash flow of $(1,234) million"),
        ] {
            assert_eq!(against(answer, reference), answer, "{reference}");
        }
        // Signed alike, written alike.
        assert_eq!(against("growth was -3 percent", "growth of −3%"), "growth was −3%");
    }

    #[test]
    fn different_figures_and_figures_the_reference_does_not_state_stay_as_written() {
        let reference = "Revenue was $4.2 billion; margin 12.4%; it holds 1 L; between 1 and 20 items.";
        for answer in [
            "Revenue was $4.2 million.",
            "Revenue was $4.3 billion.",
            "margin 12%",
            "it holds 1.3 L",
            "3 items",
            "Costs were $7 billion.",
        ] {
            assert_eq!(against(answer, reference), answer);
        }
    }

    #[test]
    fn abbreviated_periods_are_spelled_out_on_both_sides() {
        let (a, r) = written_as_the_reference("FY23 revenue", "Revenue in FY2023");
        assert_eq!((a.as_str(), r.as_str()), ("fiscal year 2023 revenue", "Revenue in fiscal year 2023"));
        let (a, r) = written_as_the_reference("In fiscal 2023, and Fiscal 2024", "Revenue in FY 2023, fiscal year 2024 and fiscal policy");
        assert_eq!(
            (a.as_str(), r.as_str()),
            ("In fiscal year 2023, and Fiscal year 2024", "Revenue in fiscal year 2023, fiscal year 2024 and fiscal policy")
        );
        assert_eq!(against("in FY 2023, Q3 2023 sales", ""), "in fiscal year 2023, third quarter 2023 sales");
        assert_eq!(against("3Q23 sales in the 3rd quarter", ""), "third quarter 2023 sales in the third quarter");
        assert_eq!(against("H1 margin", ""), "first half margin");
        // Not periods: an identifier, a lowercase h1, a quarter that does not exist.
        assert_eq!(against("COVID-19 and h1 and Q10 and Q5", ""), "COVID-19 and h1 and Q10 and Q5");
    }

    #[test]
    fn any_text_is_rewritten_without_panicking() {
        for text in ["", "—", "FY", "fy fy 12", "Q", "1H", "$", "(", "12,,3", "日本 4.2 億", "Q3'23", "\u{0}9", "$ 5 USD USD"] {
            let _ = written_as_the_reference(text, text);
            let _ = written_as_the_reference(text, "$5 and 5% and FY2023");
        }
    }
}
