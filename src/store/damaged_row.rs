//! Reading stored rows field by field, so one damaged row (a hand edit, a half-restored copy,
//! another tool's write) is reported with its table, its row and the field that cannot be read,
//! instead of failing every listing with SQLite's "invalid column type at index 5".
//!
//! SQLite keeps whatever value a statement writes, whatever the column's declared type: text in
//! an INTEGER column, a blob in a TEXT one, NULL where the schema was altered. So each field is
//! taken as the raw value SQLite holds and converted here, and every problem says what was found.

use rusqlite::types::ValueRef;
use rusqlite::Row;
use serde::de::DeserializeOwned;

/// One stored row that cannot be read, and why. Nothing is changed by finding one.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DamagedRow {
    pub table: &'static str,
    /// The row's key as far as it could be read: a run id, "run …, question …", or the
    /// SQLite rowid when the key itself is unreadable.
    pub row: String,
    /// The column that could not be read.
    pub field: &'static str,
    /// What was found there instead of what was expected.
    pub problem: String,
}

impl std::fmt::Display for DamagedRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "table {}, row {}: {} {}", self.table, self.row, self.field, self.problem)
    }
}

/// A field that cannot be read, before the caller says which table and row it is in.
#[derive(Debug)]
pub(super) struct FieldDamage {
    field: &'static str,
    problem: String,
}

impl FieldDamage {
    pub(super) fn new(field: &'static str, problem: String) -> Self {
        FieldDamage { field, problem }
    }

    pub(super) fn in_row(self, table: &'static str, row: impl Into<String>) -> DamagedRow {
        DamagedRow { table, row: row.into(), field: self.field, problem: self.problem }
    }
}

/// How a stored value that is not what the column needs is described.
fn found(value: ValueRef<'_>) -> String {
    match value {
        ValueRef::Null => "is empty (NULL)".into(),
        ValueRef::Integer(n) => format!("is the number {n}"),
        ValueRef::Real(x) => format!("is the number {x}"),
        ValueRef::Text(bytes) => format!("is the text {:?}", preview(&String::from_utf8_lossy(bytes))),
        ValueRef::Blob(bytes) => format!("is {} bytes of binary data", bytes.len()),
    }
}

/// The start of a stored text, enough to recognise it (a damaged row may hold megabytes).
fn preview(text: &str) -> String {
    const SHOWN: usize = 60;
    match text.char_indices().nth(SHOWN) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

fn raw<'r>(row: &'r Row<'_>, index: usize, field: &'static str) -> Result<ValueRef<'r>, FieldDamage> {
    row.get_ref(index).map_err(|e| FieldDamage::new(field, format!("cannot be read: {e}")))
}

/// A text field that must be there.
pub(super) fn text(row: &Row<'_>, index: usize, field: &'static str) -> Result<String, FieldDamage> {
    match raw(row, index, field)? {
        ValueRef::Text(bytes) => String::from_utf8(bytes.to_vec())
            .map_err(|e| FieldDamage::new(field, format!("is not UTF-8 text (byte {})", e.utf8_error().valid_up_to()))),
        other => Err(FieldDamage::new(field, format!("{}, not text", found(other)))),
    }
}

/// A text field that may be empty (NULL).
pub(super) fn optional_text(row: &Row<'_>, index: usize, field: &'static str) -> Result<Option<String>, FieldDamage> {
    match raw(row, index, field)? {
        ValueRef::Null => Ok(None),
        _ => text(row, index, field).map(Some),
    }
}

/// A whole number that must be there.
pub(super) fn integer(row: &Row<'_>, index: usize, field: &'static str) -> Result<i64, FieldDamage> {
    match raw(row, index, field)? {
        ValueRef::Integer(n) => Ok(n),
        other => Err(FieldDamage::new(field, format!("{}, not a whole number", found(other)))),
    }
}

/// A count or position: a whole number, never negative.
pub(super) fn count(row: &Row<'_>, index: usize, field: &'static str) -> Result<usize, FieldDamage> {
    let n = integer(row, index, field)?;
    usize::try_from(n).map_err(|_| FieldDamage::new(field, format!("is {n}, below zero")))
}

/// A number that must be there (SQLite stores a whole-valued REAL as an integer).
pub(super) fn real(row: &Row<'_>, index: usize, field: &'static str) -> Result<f64, FieldDamage> {
    match raw(row, index, field)? {
        ValueRef::Real(x) => Ok(x),
        ValueRef::Integer(n) => Ok(n as f64),
        other => Err(FieldDamage::new(field, format!("{}, not a number", found(other)))),
    }
}

/// A JSON text field holding a `what` (said in the problem: "a run's settings").
pub(super) fn json<T: DeserializeOwned>(
    row: &Row<'_>,
    index: usize,
    field: &'static str,
    what: &str,
) -> Result<T, FieldDamage> {
    let stored = text(row, index, field)?;
    parse_json(&stored, field, what)
}

/// `json` for a field that may be empty (NULL).
pub(super) fn optional_json<T: DeserializeOwned>(
    row: &Row<'_>,
    index: usize,
    field: &'static str,
    what: &str,
) -> Result<Option<T>, FieldDamage> {
    optional_text(row, index, field)?.map(|stored| parse_json(&stored, field, what)).transpose()
}

fn parse_json<T: DeserializeOwned>(stored: &str, field: &'static str, what: &str) -> Result<T, FieldDamage> {
    serde_json::from_str(stored).map_err(|e| FieldDamage::new(field, format!("is not valid JSON for {what}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;

    /// Each reader on each kind of value SQLite can hold: what is accepted and how the rest is
    /// described.
    #[test]
    fn each_field_reader_accepts_its_kind_and_names_what_else_it_found() {
        let conn = Connection::open_in_memory().unwrap();
        let values = "SELECT 'text', NULL, 7, 2.5, x'00ff', x'ff', '{\"a\": 1', -3";
        conn.query_row(values, [], |row| {
            assert_eq!(text(row, 0, "name").unwrap(), "text");
            assert_eq!(text(row, 1, "name").unwrap_err().in_row("runs", "r1").to_string(), "table runs, row r1: name is empty (NULL), not text");
            assert_eq!(text(row, 4, "name").unwrap_err().problem, "is 2 bytes of binary data, not text");
            assert_eq!(optional_text(row, 1, "note").unwrap(), None);
            assert_eq!(integer(row, 2, "n").unwrap(), 7);
            assert_eq!(integer(row, 0, "n").unwrap_err().problem, "is the text \"text\", not a whole number");
            assert_eq!(count(row, 7, "total_items").unwrap_err().problem, "is -3, below zero");
            assert_eq!(real(row, 2, "value").unwrap(), 7.0);
            assert_eq!(real(row, 3, "value").unwrap(), 2.5);
            assert_eq!(real(row, 1, "value").unwrap_err().problem, "is empty (NULL), not a number");
            let broken = json::<serde_json::Value>(row, 6, "config_json", "a run's settings").unwrap_err();
            assert!(broken.problem.starts_with("is not valid JSON for a run's settings: EOF"), "{}", broken.problem);
            assert_eq!(optional_json::<serde_json::Value>(row, 1, "answer_json", "an answer").unwrap(), None);
            Ok(())
        })
        .unwrap();
        // Text that is not UTF-8 (a blob cast to text) says where it stops being text.
        conn.query_row("SELECT CAST(x'61ff' AS TEXT)", [], |row| {
            assert_eq!(text(row, 0, "name").unwrap_err().problem, "is not UTF-8 text (byte 1)");
            Ok(())
        })
        .unwrap();
    }

    #[test]
    fn a_long_stored_text_is_shown_by_its_start() {
        let long = "é".repeat(500);
        assert_eq!(preview(&long).chars().count(), 61);
        assert_eq!(preview("short"), "short");
    }
}
