//! TEMPORARY until the metrics branch lands (not committed).
use crate::dataset::Question;
use crate::target::Answer;
use std::collections::BTreeMap;
pub const ALL_METRICS: &[&str] = &["exact_match"];
pub fn select(names: &[String]) -> Result<Vec<&'static str>, String> {
    if names.is_empty() { return Ok(ALL_METRICS.to_vec()); }
    names.iter().map(|n| ALL_METRICS.iter().copied().find(|m| m == n).ok_or_else(|| format!("unknown metric {n}"))).collect()
}
pub fn score_item(q: &Question, a: &Answer, _k: usize) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    if let Some(r) = &q.answer { m.insert("exact_match".into(), (r.trim().to_lowercase() == a.text.trim().to_lowercase()) as u8 as f64); }
    m
}
pub fn describe(_n: &str) -> &'static str { "" }
