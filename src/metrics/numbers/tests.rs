//! The numeric check on sentences written like annual-report answers: what it must catch, and
//! the look-alikes a naive digit comparison would wrongly call conflicts.

use super::*;

const REFERENCE: &str = "In fiscal 2023, net revenues increased 8% to $4.2 billion, driven by the \
    Americas segment. Operating margin was 15.3%, down 120 basis points from 2022. Diluted \
    earnings per share were $2.47, compared with $2.10 in 2022. The company employed \
    approximately 12,400 people at December 31, 2023, and returned $850 million to shareholders.";

fn conflicts(answer: &str, reference: &str) -> Vec<String> {
    check_numbers(answer, &[reference]).conflicts.into_iter().map(|c| c.description).collect()
}

#[test]
fn a_changed_figure_is_a_conflict() {
    let found = number_conflict("Operating margin was 12.1% in fiscal 2023.", REFERENCE);
    let found = found.unwrap_or_default();
    assert!(found.starts_with("says 12.1%, reference says 15.3%"), "{found}");
    assert!(found.contains("margin"), "{found}");

    let eps = number_conflict("Diluted earnings per share were $2.74.", REFERENCE).unwrap_or_default();
    assert!(eps.contains("$2.74") && eps.contains("$2.47"), "{eps}");

    let revenue = number_conflict("Net revenues rose to $3.8 billion in fiscal 2023.", REFERENCE);
    assert!(revenue.is_some_and(|r| r.contains("$4.2 billion")));

    let people = number_conflict("At year end the company employed about 9,000 people.", REFERENCE);
    assert!(people.is_some(), "9,000 is not about 12,400");

    let near = number_conflict("Operating margin was 14% in fiscal 2023.", REFERENCE);
    assert!(near.is_some(), "15.3% is not 14% at the precision written");
    assert_eq!(number_conflict("Operating margin was 15% in fiscal 2023.", REFERENCE), None);

    let date = number_conflict("Headcount was counted at December 31, 2022 when the company employed people.", REFERENCE);
    assert_eq!(date, None, "a date needs three key words in common");
}

#[test]
fn the_same_figure_written_another_way_is_support() {
    for answer in [
        "Net revenues were 4,200 million dollars in fiscal 2023.",
        "Net revenues reached $4,213 million in fiscal 2023.",
        "Net revenues were $4,200,000,000 in 2023.",
        "Net revenues were about $4 billion.",
        "Net revenues grew 8 percent.",
        "Operating margin was 15%, 1.2 percentage points lower than in 2022.",
        "The company had more than 12,000 employees and people on staff.",
        "Shareholders received $0.85 billion.",
    ] {
        let check = check_numbers(answer, &[REFERENCE]);
        assert!(check.conflicts.is_empty(), "{answer}: {:?}", check.conflicts);
        assert!(check.supported >= 1, "{answer}: {check:?}");
        assert_eq!(check.score(), Some(1.0));
    }
    // Rounded: 4.2 billion is 4,213 million at the precision written, and the other way round.
    assert!(conflicts("Revenue was $4.2 billion.", "Revenue was $4,213 million.").is_empty());
    assert!(conflicts("Revenue was $4,213 million.", "Revenue was $4.2 billion.").is_empty());
}

#[test]
fn computed_differences_and_changes_are_support() {
    let reference = "Revenue was $3.9 billion in 2022 and $4.2 billion in 2023.";
    let check = check_numbers("Revenue rose by $300 million, or 7.7%, to $4.2 billion.", &[reference]);
    assert!(check.conflicts.is_empty(), "{:?}", check.conflicts);
    assert_eq!(check.supported, 3);
}

#[test]
fn signs_and_directions() {
    let reference = "Free cash flow was $(1,234) million. Same-store sales decreased 5% in the quarter.";
    assert!(conflicts("Same-store sales fell by 5%.", reference).is_empty());
    assert!(conflicts("Same-store sales were -5% in the quarter.", reference).is_empty());
    let up = conflicts("Same-store sales increased 5% in the quarter.", reference);
    assert_eq!(up.len(), 1, "{up:?}");
    assert!(up[0].contains("(a rise)") && up[0].contains("(a fall)"), "{up:?}");
    assert!(conflicts("Free cash flow was negative $1,234 million.", reference).is_empty());
}

#[test]
fn different_quantities_in_one_sentence_are_not_conflicts() {
    // Two percentages of different things; the answer's second one is not in the reference.
    let reference = "Gross margin was 42% and the effective tax rate was 21%.";
    assert!(conflicts("Gross margin was 42%, while marketing spend rose 9%.", reference).is_empty());
    // Years beside amounts: 2023 is not an amount and $2,023 is not a year.
    assert!(conflicts("In 2023 the dividend was $1.10 per share.", "The dividend was $1.10 per share in 2023, paid since 1998.").is_empty());
    // The same key words in another year.
    assert!(conflicts("Revenue was $3.9 billion in 2022.", "Revenue was $4.2 billion in 2023.").is_empty());
    // One word in common beside a long context is a coincidence, not the same quantity.
    assert!(conflicts(
        "A full charge takes around an hour and a half (about 3.8 hours in Quiet Charge mode).",
        "About 50 minutes to 80% and about 1.5 hours to full.",
    )
    .is_empty());
    // Counts of different things (`2 ×` ports against `100 W`), and a footnote mark in a table
    // row (`Consumer Price Index, 2 percent change ... 4.6 4.7`) against a stated percentage.
    assert!(conflicts("2 × USB-C (100 W each) and 2 × USB-A", "two USB-C ports rated at 100 W each").is_empty());
    assert!(conflicts(
        "The forecast assumes consumer price inflation of 4.7 percent in 2022.",
        "Consumer Price Index, 2 percent change, year/year ...... 1.2 4.6 4.7 2.3 2.3",
    )
    .is_empty());
    assert_eq!(conflicts("The store network has 12 stores.", "The network has 15 stores.").len(), 1);
    assert!(conflicts("The network has 12 outlets.", "The network has 15 stores.").is_empty());
    // Per-share figures against totals.
    assert!(conflicts("Net income was $2.1 billion.", "Diluted earnings per share were $2.47.").is_empty());
}

#[test]
fn digits_that_are_not_quantities_never_conflict() {
    let reference = "Revenue in Q3 was $1.1 billion, up 4%. Operating margin was 18%.";
    for answer in [
        "1. Revenue in Q3 was $1.1 billion.\n2. Operating margin was 18%.",
        "As stated on page 45, Q4 revenue was $1.1 billion.",
        "FY2024 revenue guidance assumes COVID-19 effects fade; revenue was $1.1 billion.",
        "Revenue was $1.1 billion[2] (see Note 7 and Item 1A).",
        "Revenue1 was $1.1 billion in the third quarter.",
        "The 10-K for 2023 reports operating margin of 18%.",
    ] {
        let check = check_numbers(answer, &[reference]);
        assert!(check.conflicts.is_empty(), "{answer}: {:?}", check.conflicts);
    }
}

#[test]
fn units_must_match_before_values_are_compared() {
    let reference = "The warranty lasts 2 years; the battery charges in 90 minutes.";
    assert!(conflicts("The battery charges in 1.5 hours.", reference).is_empty());
    let wrong = conflicts("The battery charges in 3 hours.", reference);
    assert_eq!(wrong.len(), 1, "{wrong:?}");
    // 2 years of warranty is not 2 hours of charging.
    assert!(conflicts("The warranty lasts 24 months.", reference).is_empty());
    // Euros are not dollars.
    assert!(conflicts("Sales were €5 billion.", "Sales were $6 billion.").is_empty());
}

#[test]
fn no_checkable_number_gives_no_score() {
    let check = number_consistency("The company focuses on customers.", REFERENCE, None);
    assert_eq!(check.score(), None);
    let check = number_consistency("Headcount: 7 regional offices.", REFERENCE, None);
    assert_eq!((check.score(), check.unchecked), (None, 1));
}

#[test]
fn the_golden_context_supports_numbers_the_short_reference_leaves_out() {
    let reference = "Revenue grew to $4.2 billion.";
    let context = "Revenue grew 8% to $4.2 billion; revenue in the Americas was $2.5 billion.";
    let check = number_consistency("Revenue grew 8% to $4.2 billion, $2.5 billion of it in the Americas.", reference, Some(context));
    assert_eq!((check.supported, check.conflicts.len()), (3, 0));
}

#[test]
fn hostile_text_never_panics() {
    let long = "$1,000,000 (2,000) -3% ".repeat(200);
    for text in ["", "%%%", "$$$", "(((", "1e999", "١٢٣ percent", "🙂 12% 🙂", long.as_str(), "9,999,999,999,999,999,999,999 billion"] {
        let _ = number_conflict(text, REFERENCE);
        let _ = number_conflict(REFERENCE, text);
        let _ = number_consistency(text, text, Some(text));
    }
}

#[test]
fn rupees_in_crore_and_other_dollars_are_compared_as_the_money_they_are() {
    let reference = "Revenue from operations was ₹42 billion in fiscal 2024.";
    assert_eq!(number_conflict("Revenue from operations was ₹4,200 crore in fiscal 2024.", reference), None);
    assert_eq!(number_conflict("Revenue from operations was Rs. 4,200 crore in fiscal 2024.", reference), None);
    let wrong = number_conflict("Revenue from operations was ₹4,800 crore in fiscal 2024.", reference).unwrap_or_default();
    assert!(wrong.contains("₹4,800 crore") && wrong.contains("₹42 billion"), "{wrong}");
    // `Rs.` does not end the sentence, so the figure keeps the key words it is checked by.
    let wrong = number_conflict("Revenue from operations was Rs. 4,800 crore in fiscal 2024.", reference).unwrap_or_default();
    assert!(wrong.contains("4,800 crore") && wrong.contains("₹42 billion"), "{wrong}");
    // Brazilian reais and other dollars are not US dollars: a different figure is not a conflict.
    let dollars = "Net revenue was $4.2 billion in 2023.";
    assert_eq!(number_conflict("Net revenue was R$5.1 billion in 2023.", dollars), None);
    assert_eq!(number_conflict("Net revenue was RD$5.1 billion in 2023.", dollars), None);
    assert!(number_conflict("Net revenue was $5.1 billion in 2023.", dollars).is_some());
}

#[test]
fn an_abbreviation_before_a_figure_does_not_cut_it_from_its_sentence() {
    let found = number_conflict("Operating margin was approx. 12.1% in fiscal 2023.", REFERENCE).unwrap_or_default();
    assert!(found.contains("15.3%"), "{found}");
    assert!(number_conflict("Operating margin was 15.3% vs. 16.5% in 2022.", REFERENCE).is_none(), "16.5% is 2022's");
    // A period that ends a sentence still ends it: the next sentence's figure has its own words.
    assert_eq!(number_conflict("The company grew. 9,000 people were hired in 2023.", REFERENCE), None);
}

#[test]
fn pence_cents_and_pounds_are_money() {
    // Annual reports give earnings and dividends per share in pence; answers write them either way.
    let eps = "Basic earnings per share were 45.2 pence in 2023.";
    assert_eq!(number_conflict("Basic earnings per share were 45.2p in 2023.", eps), None);
    assert_eq!(number_consistency("Basic earnings per share were 45.2p in 2023.", eps, None).score(), Some(1.0));
    let wrong = number_conflict("Basic earnings per share were 42.5p in 2023.", eps).unwrap_or_default();
    assert!(wrong.contains("42.5p") && wrong.contains("45.2 pence"), "{wrong}");
    assert!(number_conflict("The final dividend is 12.3 pence per share.", "A final dividend of 13.2p per share.").is_some());
    assert_eq!(number_conflict("The dividend per share was 30 cents.", "The dividend per share was $0.30."), None);
    assert!(number_conflict("The dividend per share was 35¢.", "The dividend per share was $0.30.").is_some());
    // A euro figure is not a US cent's: different money is never a conflict.
    assert_eq!(number_conflict("The dividend per share was 35 cents.", "The dividend per share was €0.30."), None);
    // Pounds after a scale word are sterling; otherwise they weigh.
    assert_eq!(number_conflict("Revenue was 3.4 million pounds in 2023.", "Revenue was £3.4m in 2023."), None);
    assert!(number_conflict("Revenue was 3.4 million pounds in 2023.", "Revenue was £4.3m in 2023.").is_some());
    assert_eq!(number_conflict("The tent weighs 4 pounds.", "The tent weighs 1.8 kg."), None);
    assert!(number_conflict("The tent weighs 4 pounds.", "The tent weighs 2.6 kg.").is_some());
    // `p.m.` is a time of day, `1080p` a video format and `Ridgeline 2p` a name, not pence.
    for not_money in ["The meeting starts at 10p.m.", "Records at 1080p.", "The Ridgeline 2p tent.", "See [ridgeline-2p]."] {
        assert!(find_mentions(not_money).iter().all(|m| !matches!(m.kind, Kind::Amount { currency: Some(_) })), "{not_money}");
    }
    assert_eq!(number_conflict("The meeting starts at 10p.m.", "The meeting starts at 9p.m."), None);
}
