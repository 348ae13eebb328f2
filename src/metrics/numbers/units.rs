//! The words that give a written number its size and its kind: scale words (`million`, `bn`,
//! `k`), currencies (`$`, `EUR`), units of measure with their factor to one base unit per
//! dimension (so `90 minutes` and `1.5 hours` are the same quantity), month names and the
//! small numbers that are spelled out.
//!
//! Plain tables: the parser in `parse.rs` looks words up here and decides nothing else.

/// A unit of measure: the dimension it measures and its size in that dimension's base unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unit {
    pub dimension: &'static str,
    pub factor: f64,
}

const fn unit(dimension: &'static str, factor: f64) -> Unit {
    Unit { dimension, factor }
}

const DAY: f64 = 86_400.0;

/// Unit words written apart from the number (`5 minutes`, `3-year`), lowercase.
const UNIT_WORDS: &[(&str, Unit)] = &[
    ("second", unit("time", 1.0)),
    ("seconds", unit("time", 1.0)),
    ("sec", unit("time", 1.0)),
    ("secs", unit("time", 1.0)),
    ("minute", unit("time", 60.0)),
    ("minutes", unit("time", 60.0)),
    ("min", unit("time", 60.0)),
    ("mins", unit("time", 60.0)),
    ("hour", unit("time", 3_600.0)),
    ("hours", unit("time", 3_600.0)),
    ("hr", unit("time", 3_600.0)),
    ("hrs", unit("time", 3_600.0)),
    ("day", unit("time", DAY)),
    ("days", unit("time", DAY)),
    ("week", unit("time", 7.0 * DAY)),
    ("weeks", unit("time", 7.0 * DAY)),
    ("month", unit("time", 30.4375 * DAY)),
    ("months", unit("time", 30.4375 * DAY)),
    ("year", unit("time", 365.25 * DAY)),
    ("years", unit("time", 365.25 * DAY)),
    ("yr", unit("time", 365.25 * DAY)),
    ("yrs", unit("time", 365.25 * DAY)),
    ("millimeter", unit("length", 0.001)),
    ("millimeters", unit("length", 0.001)),
    ("mm", unit("length", 0.001)),
    ("centimeter", unit("length", 0.01)),
    ("centimeters", unit("length", 0.01)),
    ("cm", unit("length", 0.01)),
    ("meter", unit("length", 1.0)),
    ("meters", unit("length", 1.0)),
    ("metre", unit("length", 1.0)),
    ("metres", unit("length", 1.0)),
    ("kilometer", unit("length", 1_000.0)),
    ("kilometers", unit("length", 1_000.0)),
    ("km", unit("length", 1_000.0)),
    ("inch", unit("length", 0.0254)),
    ("inches", unit("length", 0.0254)),
    ("foot", unit("length", 0.3048)),
    ("feet", unit("length", 0.3048)),
    ("ft", unit("length", 0.3048)),
    ("mile", unit("length", 1_609.344)),
    ("miles", unit("length", 1_609.344)),
    ("gram", unit("mass", 1.0)),
    ("grams", unit("mass", 1.0)),
    ("kilogram", unit("mass", 1_000.0)),
    ("kilograms", unit("mass", 1_000.0)),
    ("kg", unit("mass", 1_000.0)),
    ("mg", unit("mass", 0.001)),
    ("lb", unit("mass", 453.592_37)),
    ("lbs", unit("mass", 453.592_37)),
    // Sterling instead after a scale word (`3.4 million pounds`): see `parse::read_suffix`.
    ("pound", unit("mass", 453.592_37)),
    ("pounds", unit("mass", 453.592_37)),
    ("oz", unit("mass", 28.349_523)),
    ("ounce", unit("mass", 28.349_523)),
    ("ounces", unit("mass", 28.349_523)),
    ("ton", unit("mass", 1_000_000.0)),
    ("tons", unit("mass", 1_000_000.0)),
    ("tonne", unit("mass", 1_000_000.0)),
    ("tonnes", unit("mass", 1_000_000.0)),
    ("liter", unit("volume", 1.0)),
    ("liters", unit("volume", 1.0)),
    ("litre", unit("volume", 1.0)),
    ("litres", unit("volume", 1.0)),
    ("ml", unit("volume", 0.001)),
    ("gallon", unit("volume", 3.785_411_8)),
    ("gallons", unit("volume", 3.785_411_8)),
    ("watt", unit("power", 1.0)),
    ("watts", unit("power", 1.0)),
    ("kw", unit("power", 1_000.0)),
    ("mw", unit("power", 1_000_000.0)),
    ("gw", unit("power", 1_000_000_000.0)),
    ("kwh", unit("energy", 1_000.0)),
    ("mwh", unit("energy", 1_000_000.0)),
    ("gwh", unit("energy", 1_000_000_000.0)),
    ("wh", unit("energy", 1.0)),
    ("mah", unit("charge", 1.0)),
    ("volt", unit("voltage", 1.0)),
    ("volts", unit("voltage", 1.0)),
    ("psi", unit("pressure", 1.0)),
    ("nm", unit("torque", 1.0)),
    ("amp", unit("current", 1.0)),
    ("amps", unit("current", 1.0)),
    ("ampere", unit("current", 1.0)),
    ("amperes", unit("current", 1.0)),
    ("bar", unit("pressure", 14.503_774)),
    ("kb", unit("data", 1e3)),
    ("mb", unit("data", 1e6)),
    ("gb", unit("data", 1e9)),
    ("tb", unit("data", 1e12)),
    ("hz", unit("frequency", 1.0)),
    ("khz", unit("frequency", 1e3)),
    ("mhz", unit("frequency", 1e6)),
    ("ghz", unit("frequency", 1e9)),
    ("mph", unit("speed", 1.0)),
    ("°c", unit("celsius", 1.0)),
    ("°f", unit("fahrenheit", 1.0)),
    ("degrees", unit("degrees", 1.0)),
];

/// Unit symbols written right after the digits (`5kg`, `10W`), case as written: `m` is left
/// out (metres or millions) and so are single capital letters that name currencies' scales.
const ATTACHED_UNITS: &[(&str, &str)] = &[
    ("s", "seconds"),
    ("sec", "seconds"),
    ("min", "minutes"),
    ("h", "hours"),
    ("hr", "hours"),
    ("hrs", "hours"),
    ("yr", "years"),
    ("yrs", "years"),
    ("mm", "mm"),
    ("cm", "cm"),
    ("km", "km"),
    ("ft", "ft"),
    ("g", "gram"),
    ("kg", "kg"),
    ("mg", "mg"),
    ("lb", "lb"),
    ("lbs", "lbs"),
    ("oz", "oz"),
    ("ml", "ml"),
    ("mL", "ml"),
    ("L", "liter"),
    ("W", "watt"),
    ("kW", "kw"),
    ("MW", "mw"),
    ("GW", "gw"),
    ("Wh", "wh"),
    ("kWh", "kwh"),
    ("MWh", "mwh"),
    ("GWh", "gwh"),
    ("mAh", "mah"),
    ("V", "volt"),
    ("psi", "psi"),
    ("Nm", "nm"),
    ("A", "amp"),
    ("KB", "kb"),
    ("MB", "mb"),
    ("GB", "gb"),
    ("TB", "tb"),
    ("Hz", "hz"),
    ("kHz", "khz"),
    ("MHz", "mhz"),
    ("GHz", "ghz"),
    ("mph", "mph"),
];

/// A unit word written apart from the number (case-insensitive), or an attached symbol (case
/// as written).
pub fn unit_word(word: &str) -> Option<Unit> {
    let lower = word.to_lowercase();
    UNIT_WORDS.iter().find(|(w, _)| *w == lower).map(|(_, u)| *u)
}

pub fn attached_unit(suffix: &str) -> Option<Unit> {
    let (_, word) = ATTACHED_UNITS.iter().find(|(s, _)| *s == suffix)?;
    unit_word(word)
}

/// Scale words written apart from the number (`4.2 billion`, `3 mn`), case-insensitive; the
/// Indian system's too (`4,200 crore` is 42 billion; annual reports in rupees are written so).
pub fn scale_word(word: &str) -> Option<f64> {
    Some(match word.to_lowercase().as_str() {
        "thousand" | "thousands" => 1e3,
        "lakh" | "lakhs" | "lac" | "lacs" => 1e5,
        "crore" | "crores" => 1e7,
        "million" | "millions" | "mn" | "mln" | "mio" => 1e6,
        "billion" | "billions" | "bn" | "bln" => 1e9,
        "trillion" | "trillions" | "tn" | "trn" => 1e12,
        _ => return None,
    })
}

/// Scale letters glued to the digits (`$4.2bn`, `12k`, `5M`). A lone `m`, `b` or `t` is a scale
/// only after a currency sign (`$5m`); otherwise `5m` is five metres.
pub fn attached_scale(suffix: &str, has_currency: bool) -> Option<f64> {
    Some(match suffix {
        "k" | "K" => 1e3,
        "M" | "mn" | "mln" | "MM" => 1e6,
        "bn" | "Bn" | "BN" | "B" | "bln" => 1e9,
        "tn" | "trn" => 1e12,
        "T" if has_currency => 1e12,
        "m" if has_currency => 1e6,
        "b" if has_currency => 1e9,
        _ => return None,
    })
}

/// Currency signs written before the number.
pub fn currency_sign(c: char) -> Option<&'static str> {
    Some(match c {
        '$' => "USD",
        '€' => "EUR",
        '£' => "GBP",
        '¥' => "JPY",
        '₹' => "INR",
        '₩' => "KRW",
        '₣' => "CHF",
        _ => return None,
    })
}

/// The currency of `$` after capitals that name no dollar this table knows (`RD$`, `J$`): some
/// other dollar or real, never the same money as `$`.
pub const OTHER_DOLLAR: &str = "other $";

/// Letters written just before `$` that name another dollar (`A$5`, `C$`, `US$`) or real (`R$`).
pub fn dollar_prefix(letters: &str) -> Option<&'static str> {
    Some(match letters {
        "US" => "USD",
        "A" | "AU" => "AUD",
        "C" | "CA" => "CAD",
        "NZ" => "NZD",
        "HK" => "HKD",
        "S" => "SGD",
        "R" | "BR" => "BRL",
        "NT" => "TWD",
        "MX" => "MXN",
        _ => return None,
    })
}

/// A US cent: the currency and its factor to the dollar (`30 cents`, `30¢`).
pub const US_CENT: (&str, f64) = ("USD", 0.01);

/// A currency's hundredth written after the number (`45.2p`, `12 pence`, `30 cents`, `30¢`):
/// the currency and the factor to its main unit. A cent is taken for a US cent; another
/// currency's cents then differ in currency and are never compared.
pub fn minor_currency(word: &str) -> Option<(&'static str, f64)> {
    Some(match word {
        "p" | "pence" | "penny" => ("GBP", 0.01),
        "cents" | "cent" => US_CENT,
        _ => return None,
    })
}

/// Currency codes and names written apart from the number (`USD 5`, `5 euros`).
pub fn currency_word(word: &str) -> Option<&'static str> {
    if let Some(code) = currency_code(word) {
        return Some(code);
    }
    Some(match word {
        "dollars" | "dollar" | "Dollars" => "USD",
        "euros" | "euro" | "Euros" => "EUR",
        "sterling" => "GBP",
        "francs" => "CHF",
        "yen" => "JPY",
        "rupees" | "rupee" => "INR",
        "yuan" | "renminbi" => "CNY",
        _ => return None,
    })
}

/// The currency a code written before a figure names, in any case (`USD 5`, `rmb 12.3`, `Rs.
/// 4,200`; the word without its `.`).
pub fn code_before_figure(word: &str) -> Option<&'static str> {
    let upper = word.to_uppercase();
    if upper == "RS" {
        return Some("INR");
    }
    currency_code(&upper)
}

/// A currency code as written after a number (`5 SEK`, `12.3 billion RMB`): ISO codes in
/// capitals, and the rupee's `Rs`.
fn currency_code(word: &str) -> Option<&'static str> {
    Some(match word {
        "USD" => "USD",
        "EUR" => "EUR",
        "GBP" => "GBP",
        "CHF" => "CHF",
        "JPY" => "JPY",
        "CAD" => "CAD",
        "AUD" => "AUD",
        "NZD" => "NZD",
        "HKD" => "HKD",
        "SGD" => "SGD",
        "INR" | "Rs" => "INR",
        "CNY" | "RMB" => "CNY",
        "KRW" => "KRW",
        "BRL" => "BRL",
        "MXN" => "MXN",
        "TWD" => "TWD",
        "ZAR" => "ZAR",
        "SEK" => "SEK",
        "NOK" => "NOK",
        "DKK" => "DKK",
        _ => return None,
    })
}

/// Month number of a month name or its usual abbreviation (`Sept.` included).
pub fn month(word: &str) -> Option<u32> {
    let lower = word.to_lowercase();
    let lower = lower.trim_end_matches('.');
    Some(match lower {
        "january" | "jan" => 1,
        "february" | "feb" => 2,
        "march" | "mar" => 3,
        "april" | "apr" => 4,
        "may" => 5,
        "june" | "jun" => 6,
        "july" | "jul" => 7,
        "august" | "aug" => 8,
        "september" | "sep" | "sept" => 9,
        "october" | "oct" => 10,
        "november" | "nov" => 11,
        "december" | "dec" => 12,
        _ => return None,
    })
}

/// The value of a spelled-out small number (`five`, `twenty-four`), lowercase or capitalised.
pub fn spelled_number(word: &str) -> Option<f64> {
    let lower = word.to_lowercase();
    if let Some((tens, ones)) = lower.split_once('-') {
        let t = spelled_single(tens)?;
        let o = spelled_single(ones)?;
        return (t >= 20.0 && t % 10.0 == 0.0 && (1.0..10.0).contains(&o)).then_some(t + o);
    }
    spelled_single(&lower)
}

fn spelled_single(word: &str) -> Option<f64> {
    const WORDS: &[&str] = &[
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
        "nineteen",
    ];
    const TENS: &[&str] = &["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"];
    if let Some(i) = WORDS.iter().position(|w| *w == word) {
        return Some(i as f64);
    }
    TENS.iter().position(|w| *w == word).map(|i| (i as f64 + 2.0) * 10.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_answer_what_they_hold() {
        assert_eq!(unit_word("Minutes").map(|u| u.factor), Some(60.0));
        assert_eq!(attached_unit("kg").map(|u| u.dimension), Some("mass"));
        assert_eq!(attached_scale("m", false), None, "5m is five metres");
        assert_eq!(attached_scale("m", true), Some(1e6));
        assert_eq!(scale_word("Billion"), Some(1e9));
        assert_eq!(month("Sept."), Some(9));
        assert_eq!(spelled_number("twenty-four"), Some(24.0));
        assert_eq!(spelled_number("twelve-five"), None);
        assert_eq!(dollar_prefix("US"), Some("USD"));
    }
}
