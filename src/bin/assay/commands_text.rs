//! `assay text FILE`: the text Assay reads from one manual, as retrieval and the generator see
//! it (headings, blocks, PDF pages). For checking an extraction against the page or another tool.

use anyhow::Context;
use assay::corpus::{read_document, ReadLimits};
use std::path::Path;

pub fn text(file: &Path, json: bool) -> anyhow::Result<()> {
    let id = file.file_stem().and_then(|s| s.to_str()).unwrap_or("document");
    let (document, warnings) =
        read_document(id, file, ReadLimits::default()).map_err(|problem| anyhow::anyhow!("{}: {problem}", file.display()))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&document).context("writing the document as JSON")?);
    } else {
        // The document's text is untrusted: no escape sequence reaches the terminal.
        use crate::terminal::text;
        for section in &document.sections {
            if let Some(heading) = &section.heading {
                println!("# {}\n", text(heading));
            }
            for block in &section.blocks {
                println!("{}\n", text(&block.text));
            }
        }
    }
    for warning in warnings {
        eprintln!("warning: {}: {warning}", file.display());
    }
    Ok(())
}
