//! Chunking: whole sentences packed up to a word budget, with a few trailing sentences repeated
//! at the start of the next chunk (overlap) so a passage cut by a chunk border is still whole in
//! one of them. A chunk starts a new section at its heading, except that a chunk still under half
//! its budget runs on into the next section, that section's heading kept as a line of its text:
//! real documents (reports, specs) have many short sections (table captions, figure titles,
//! rows taken for headings) whose text alone makes chunks too small to hold an answer.

use super::{split_sentences, Chunk, Document};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash)]
pub struct ChunkSettings {
    /// Most words in a chunk (a single longer sentence is cut into windows of this size).
    pub size_words: usize,
    /// At most this many words of the previous chunk's last sentences start the next chunk.
    pub overlap_words: usize,
}

/// Chosen by measurement (`assay bench` from 120 to 400 words on both real-document sets and
/// the sample manuals, README "Chunking"): real questions' golden passages often run to several
/// paragraphs. On realdocs hit@5 rose from 0.906 (BM25) / 0.927 (hybrid) at 120 words to 0.990
/// at 250; on realdocs-hard 350 words lifted BM25's hit@5 from 0.877 to 0.923 and hybrid's from
/// 0.862 to 0.908 (dense embedded by windows), with no loss on realdocs or the manuals.
impl Default for ChunkSettings {
    fn default() -> Self {
        Self { size_words: 350, overlap_words: 70 }
    }
}

impl ChunkSettings {
    /// Size at least 1 and overlap below size, so chunking always moves forward.
    pub fn normalized(self) -> Self {
        let size_words = self.size_words.max(1);
        Self { size_words, overlap_words: self.overlap_words.min(size_words - 1) }
    }
}

/// A sentence (or a piece of an over-long one) with where it came from, or a section's heading.
struct Unit {
    text: String,
    words: usize,
    /// Blocks are numbered through the document, so a line break separates blocks of two sections.
    block: usize,
    page: Option<u32>,
    /// The section's heading (it opens the section): the chunk's `heading` when the chunk starts
    /// here, a line of its text when the chunk runs on into this section.
    heading: bool,
    section: usize,
}

pub fn chunk_document(doc: &Document, settings: ChunkSettings) -> Vec<Chunk> {
    let settings = settings.normalized();
    let mut units = Vec::new();
    let mut block_number = 0;
    for (section_index, section) in doc.sections.iter().enumerate() {
        if let Some(heading) = &section.heading {
            let page = section.blocks.first().and_then(|b| b.page);
            // The heading path's last part is what the page shows.
            let shown = heading.rsplit(" > ").next().unwrap_or(heading).to_string();
            let words = shown.split_whitespace().count();
            units.push(Unit { text: shown, words, block: block_number, page, heading: true, section: section_index });
            block_number += 1;
        }
        for block in &section.blocks {
            for sentence in split_sentences(&block.text) {
                push_units(&mut units, sentence, block_number, block.page, section_index, settings);
            }
            block_number += 1;
        }
    }
    let mut chunks = Vec::new();
    for range in pack(&units, settings) {
        let first = &units[range.start];
        // A heading opening the chunk is its `heading`, not its text.
        let body = if first.heading { range.start + 1..range.end } else { range.clone() };
        if body.is_empty() {
            continue;
        }
        chunks.push(Chunk {
            id: format!("{}#{}", doc.id, chunks.len()),
            doc: doc.id.clone(),
            text: join_units(&units[body.clone()]),
            heading: doc.sections[first.section].heading.clone(),
            page: units[body.start].page,
        });
    }
    chunks
}

fn push_units(units: &mut Vec<Unit>, sentence: String, block: usize, page: Option<u32>, section: usize, s: ChunkSettings) {
    let words: Vec<&str> = sentence.split_whitespace().collect();
    if words.len() <= s.size_words {
        units.push(Unit { words: words.len(), text: sentence, block, page, heading: false, section });
        return;
    }
    let step = s.size_words - s.overlap_words;
    let mut start = 0;
    loop {
        let end = (start + s.size_words).min(words.len());
        units.push(Unit { text: words[start..end].join(" "), words: end - start, block, page, heading: false, section });
        if end == words.len() {
            break;
        }
        start += step;
    }
}

/// Ranges of units, each within the word budget (or a single unit). A range stops at a
/// heading unless it holds under half the budget; consecutive ranges within one section share
/// up to `overlap_words` words of trailing sentences.
fn pack(units: &[Unit], s: ChunkSettings) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::new();
    let mut start = 0;
    while start < units.len() {
        let mut end = start;
        let mut words = 0;
        while end < units.len() && (end == start || words + units[end].words <= s.size_words) {
            if end > start && units[end].heading && words * 2 >= s.size_words {
                break;
            }
            // The heading opening a chunk is not in its text: it takes none of the budget.
            if !(end == start && units[end].heading) {
                words += units[end].words;
            }
            end += 1;
        }
        ranges.push(start..end);
        if end == units.len() {
            break;
        }
        // Overlap only within the section the next chunk starts in, never a heading.
        let mut next = end;
        let mut overlap = 0;
        while next - 1 > start
            && !units[next - 1].heading
            && units[next - 1].section == units[end].section
            && overlap + units[next - 1].words <= s.overlap_words
        {
            next -= 1;
            overlap += units[next].words;
        }
        start = next;
    }
    ranges
}

/// Sentences of one block are joined with spaces, blocks with line breaks.
fn join_units(units: &[Unit]) -> String {
    let mut text = String::new();
    for (i, unit) in units.iter().enumerate() {
        if i > 0 {
            text.push(if units[i - 1].block == unit.block { ' ' } else { '\n' });
        }
        text.push_str(&unit.text);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{Block, DocumentKind, Section};

    fn doc(sections: Vec<(Option<&str>, Vec<&str>)>) -> Document {
        Document {
            id: "d".into(),
            path: "d.md".into(),
            kind: DocumentKind::Markdown,
            pages: None,
            sections: sections
                .into_iter()
                .map(|(h, blocks)| Section {
                    heading: h.map(str::to_string),
                    blocks: blocks.into_iter().map(|t| Block { text: t.into(), page: None }).collect(),
                })
                .collect(),
        }
    }

    #[test]
    fn packs_sentences_with_overlap_and_stops_at_headings_once_half_full() {
        let d = doc(vec![
            (Some("A"), vec!["One two three. Four five six. Seven eight nine."]),
            (Some("B"), vec!["Ten eleven.", "Twelve."]),
        ]);
        let chunks = chunk_document(&d, ChunkSettings { size_words: 6, overlap_words: 3 });
        let got: Vec<(&str, &str, Option<&str>)> =
            chunks.iter().map(|c| (c.id.as_str(), c.text.as_str(), c.heading.as_deref())).collect();
        assert_eq!(
            got,
            [
                ("d#0", "One two three. Four five six.", Some("A")),
                ("d#1", "Four five six. Seven eight nine.", Some("A")),
                ("d#2", "Ten eleven.\nTwelve.", Some("B")),
            ]
        );
    }

    #[test]
    fn a_short_section_runs_on_into_the_next_with_its_heading_as_a_line() {
        let d = doc(vec![(Some("A"), vec!["Short one."]), (Some("Doc > B"), vec!["Ten eleven.", "Twelve thirteen."])]);
        let chunks = chunk_document(&d, ChunkSettings { size_words: 8, overlap_words: 2 });
        let got: Vec<(&str, Option<&str>)> = chunks.iter().map(|c| (c.text.as_str(), c.heading.as_deref())).collect();
        assert_eq!(got, [("Short one.\nB\nTen eleven.\nTwelve thirteen.", Some("A"))]);
    }

    #[test]
    fn an_over_long_sentence_is_cut_into_windows() {
        let d = doc(vec![(None, vec!["a b c d e f g h i j"])]);
        let chunks = chunk_document(&d, ChunkSettings { size_words: 4, overlap_words: 1 });
        let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, ["a b c d", "d e f g", "g h i j"]);
    }

    #[test]
    fn zero_overlap_and_degenerate_settings_terminate() {
        let d = doc(vec![(None, vec!["A b. C d. E f."])]);
        let none = chunk_document(&d, ChunkSettings { size_words: 2, overlap_words: 0 });
        assert_eq!(none.len(), 3);
        let silly = chunk_document(&d, ChunkSettings { size_words: 0, overlap_words: 9 });
        assert_eq!(silly.len(), 6);
    }
}
