//! Markdown: headings become section metadata, the rest becomes plain text blocks.
//!
//! Parsed with pulldown-cmark (CommonMark + tables), so emphasis, links, images, code spans
//! and HTML are stripped by the parser's structure rather than by guessing with patterns:
//! a link keeps its text, an image its alt text, a table row reads `Header: cell; Header: cell`.

use super::{Block, Section};
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

pub(crate) fn markdown_sections(source: &str) -> Vec<Section> {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS;
    let mut reader = MarkdownReader::default();
    for event in Parser::new_ext(source, options) {
        reader.event(event);
    }
    reader.finish()
}

#[derive(Default)]
struct MarkdownReader {
    sections: Vec<Section>,
    headings: Vec<(HeadingLevel, String)>,
    blocks: Vec<Block>,
    inline: String,
    /// Next number of each open list; `None` for bullet lists.
    lists: Vec<Option<u64>>,
    in_metadata: bool,
    in_heading: bool,
    table_head: Vec<String>,
    table_row: Vec<String>,
    in_table_head: bool,
    /// `3. ` for the next block of an ordered list item (kept: steps are referred to by number).
    item_marker: Option<String>,
}

impl MarkdownReader {
    fn event(&mut self, event: Event<'_>) {
        if self.in_metadata {
            if let Event::End(TagEnd::MetadataBlock(_)) = event {
                self.in_metadata = false;
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) | Event::Code(text) | Event::InlineMath(text) => {
                self.inline.push_str(&text)
            }
            Event::DisplayMath(text) => self.inline.push_str(&text),
            Event::SoftBreak | Event::HardBreak => self.inline.push(' '),
            Event::TaskListMarker(_)
            | Event::Html(_)
            | Event::InlineHtml(_)
            | Event::FootnoteReference(_)
            | Event::Rule => {}
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Heading { .. } => {
                self.flush_block();
                self.in_heading = true;
            }
            Tag::Paragraph | Tag::CodeBlock(_) | Tag::BlockQuote(_) => self.flush_block(),
            Tag::List(start) => {
                self.flush_block();
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush_block();
                if let Some(Some(n)) = self.lists.last_mut() {
                    self.item_marker = Some(format!("{n}. "));
                    *n += 1;
                }
            }
            Tag::TableHead => self.in_table_head = true,
            Tag::TableRow => self.table_row.clear(),
            Tag::TableCell => self.inline.clear(),
            Tag::MetadataBlock(_) => self.in_metadata = true,
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Heading(level) => {
                self.in_heading = false;
                let text = collapse_whitespace(&self.inline);
                self.inline.clear();
                self.close_section();
                self.headings.retain(|(l, _)| *l < level);
                if !text.is_empty() {
                    self.headings.push((level, text));
                }
            }
            TagEnd::Paragraph | TagEnd::CodeBlock | TagEnd::BlockQuote(_) => self.flush_block(),
            TagEnd::Item => {
                self.flush_block();
                self.item_marker = None;
            }
            TagEnd::List(_) => {
                self.flush_block();
                self.lists.pop();
            }
            TagEnd::TableCell => {
                let cell = collapse_whitespace(&self.inline);
                self.inline.clear();
                if self.in_table_head {
                    self.table_head.push(cell);
                } else {
                    self.table_row.push(cell);
                }
            }
            TagEnd::TableHead => self.in_table_head = false,
            TagEnd::TableRow => {
                let row = self.table_row_text();
                if !row.is_empty() {
                    self.blocks.push(Block { text: row, page: None });
                }
            }
            TagEnd::Table => self.table_head.clear(),
            _ => {}
        }
    }

    /// `Part: Burner head; Quantity: 1` — each cell under its column name.
    fn table_row_text(&self) -> String {
        let cells: Vec<String> = self
            .table_row
            .iter()
            .enumerate()
            .filter(|(_, cell)| !cell.is_empty())
            .map(|(i, cell)| match self.table_head.get(i).filter(|h| !h.is_empty()) {
                Some(header) => format!("{header}: {cell}"),
                None => cell.clone(),
            })
            .collect();
        cells.join("; ")
    }

    fn flush_block(&mut self) {
        if self.in_heading {
            return;
        }
        let mut text = collapse_whitespace(&self.inline);
        self.inline.clear();
        if text.is_empty() {
            return;
        }
        if let Some(marker) = self.item_marker.take() {
            text.insert_str(0, &marker);
        }
        self.blocks.push(Block { text, page: None });
    }

    fn close_section(&mut self) {
        self.flush_block();
        if self.blocks.is_empty() {
            return;
        }
        let heading = (!self.headings.is_empty()).then(|| {
            self.headings
                .iter()
                .map(|(_, text)| text.as_str())
                .collect::<Vec<_>>()
                .join(" > ")
        });
        self.sections.push(Section {
            heading,
            blocks: std::mem::take(&mut self.blocks),
        });
    }

    fn finish(mut self) -> Vec<Section> {
        self.close_section();
        self.sections
    }
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(section: &Section) -> Vec<&str> {
        section.blocks.iter().map(|b| b.text.as_str()).collect()
    }

    #[test]
    fn strips_markup_and_keeps_heading_paths() {
        let md = "---\ntitle: x\n---\n# Stove\n\nThe **Ridgeline** is *light*; see \
                  [safety](#safety) and ![a burner](b.png) `code`.\n\n## Lighting\n\n\
                  1. Open the valve.\n2. Press <b>the</b> button.\n\n### Cold\n\nWarm it.\n\n\
                  ## Specs\n\n| Part | Qty |\n|---|---|\n| Burner | 1 |\n| Pouch | |\n";
        let sections = markdown_sections(md);
        let headings: Vec<_> = sections.iter().map(|s| s.heading.as_deref()).collect();
        assert_eq!(
            headings,
            [
                Some("Stove"),
                Some("Stove > Lighting"),
                Some("Stove > Lighting > Cold"),
                Some("Stove > Specs")
            ]
        );
        assert_eq!(
            texts(&sections[0]),
            ["The Ridgeline is light; see safety and a burner code."]
        );
        assert_eq!(texts(&sections[1]), ["1. Open the valve.", "2. Press the button."]);
        assert_eq!(texts(&sections[3]), ["Part: Burner; Qty: 1", "Part: Pouch"]);
    }

    #[test]
    fn loose_and_nested_lists_keep_their_numbers() {
        let sections = markdown_sections("1. First.

   More.

2. Second.
   - sub
");
        assert_eq!(texts(&sections[0]), ["1. First.", "More.", "2. Second.", "sub"]);
    }

    #[test]
    fn text_before_any_heading_has_no_heading() {
        let sections = markdown_sections("Intro text.\n\n# Title\n\nBody.");
        assert_eq!(sections[0].heading, None);
        assert_eq!(sections[1].heading.as_deref(), Some("Title"));
    }
}
