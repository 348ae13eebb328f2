//! Bounds on what a GGUF header may make us allocate, checked before anything is built from it.
//!
//! candle's GGUF reader checks each length against the bytes left in the file, but turns every
//! metadata array element into a `Value` of 32 bytes: a 1-byte element costs 32 times its size
//! on disk, so a 1 GB array of bytes asks for 32 GB. `scan_metadata` walks the header first,
//! skipping values without building them, and refuses arrays longer than any real tokenizer
//! needs. `check_dimensions` then bounds the sizes the runtime allocates from metadata before
//! it reads a weight: a context length of 2^32 − 1 registered fine and aborted every load on
//! its RoPE tables.

use std::io::{BufRead, Read, Seek, SeekFrom};

use candle_core::quantized::gguf_file;

/// One metadata array: the largest real vocabularies have about 262,000 tokens (Gemma 3);
/// merges lists are of the same order.
pub const MAX_ARRAY_ELEMENTS: u64 = 4_000_000;
/// All metadata array elements together (tokens, scores, types and merges of one vocabulary
/// are four arrays): about 256 MiB of candle values at most.
pub const MAX_METADATA_ELEMENTS: u64 = 8_000_000;
/// Arrays of arrays deeper than this are no model's metadata.
const MAX_ARRAY_DEPTH: usize = 4;
/// Context lengths beyond this are refused: the largest published windows are 1M tokens.
pub const MAX_CONTEXT_LENGTH: u64 = 1 << 20;
/// The RoPE tables (cos and sin, `context x rotary dimensions / 2` floats each) are built for
/// the whole context at load.
pub const MAX_ROPE_TABLE_BYTES: u64 = 512 << 20;

/// Walk the header's metadata without building it; Err with the reason when an array or all
/// of them together pass the limits above. Malformed headers are left to candle's reader,
/// which names what is wrong: this returns Ok when it cannot read on.
pub(crate) fn scan_metadata<R: Read + Seek + BufRead>(reader: &mut R) -> Result<(), String> {
    let start = reader.stream_position().map_err(|e| e.to_string())?;
    let result = scan(reader);
    reader.seek(SeekFrom::Start(start)).map_err(|e| e.to_string())?;
    match result {
        Err(Scan::Refused(why)) => Err(why),
        Ok(()) | Err(Scan::Unreadable) => Ok(()),
    }
}

enum Scan {
    Refused(String),
    /// The header does not read as GGUF: candle's reader reports it.
    Unreadable,
}

impl From<std::io::Error> for Scan {
    fn from(_: std::io::Error) -> Self {
        Scan::Unreadable
    }
}

struct Header {
    /// Version 1 writes lengths as u32, later versions as u64.
    wide_lengths: bool,
    elements: u64,
}

fn scan<R: Read + Seek>(reader: &mut R) -> Result<(), Scan> {
    let mut magic = [0u8; 4];
    reader.read_exact(&mut magic)?;
    if &magic != b"GGUF" {
        return Err(Scan::Unreadable);
    }
    let version = read_u32(reader)?;
    let mut header = Header { wide_lengths: version >= 2, elements: 0 };
    let _tensors = header.length(reader)?;
    let entries = header.length(reader)?;
    for _ in 0..entries {
        let key_length = header.length(reader)?;
        let mut key = vec![0u8; key_length.min(256) as usize];
        reader.read_exact(&mut key)?;
        skip(reader, key_length.saturating_sub(256))?;
        let key = String::from_utf8_lossy(&key).into_owned();
        let kind = read_u32(reader)?;
        header.skip_value(reader, kind, &key, 0)?;
    }
    Ok(())
}

impl Header {
    fn length<R: Read>(&self, reader: &mut R) -> Result<u64, Scan> {
        Ok(if self.wide_lengths { read_u64(reader)? } else { u64::from(read_u32(reader)?) })
    }

    fn skip_value<R: Read + Seek>(&mut self, reader: &mut R, kind: u32, key: &str, depth: usize) -> Result<(), Scan> {
        match kind {
            // u8, i8, bool; u16, i16; u32, i32, f32; u64, i64, f64
            0 | 1 | 7 => skip(reader, 1),
            2 | 3 => skip(reader, 2),
            4 | 5 | 6 => skip(reader, 4),
            10..=12 => skip(reader, 8),
            8 => {
                let length = self.length(reader)?;
                skip(reader, length)
            }
            9 => {
                let element_kind = read_u32(reader)?;
                let count = self.length(reader)?;
                if count > MAX_ARRAY_ELEMENTS {
                    return Err(Scan::Refused(format!(
                        "metadata {key}: an array of {count} elements (more than {MAX_ARRAY_ELEMENTS}, far beyond any vocabulary)"
                    )));
                }
                self.elements += count;
                if self.elements > MAX_METADATA_ELEMENTS {
                    return Err(Scan::Refused(format!(
                        "metadata arrays hold more than {MAX_METADATA_ELEMENTS} elements in all (at {key})"
                    )));
                }
                if depth >= MAX_ARRAY_DEPTH && element_kind == 9 {
                    return Err(Scan::Refused(format!("metadata {key}: arrays nested more than {MAX_ARRAY_DEPTH} deep")));
                }
                let fixed = match element_kind {
                    0 | 1 | 7 => Some(1),
                    2 | 3 => Some(2),
                    4 | 5 | 6 => Some(4),
                    10..=12 => Some(8),
                    _ => None,
                };
                match fixed {
                    Some(size) => skip(reader, count.saturating_mul(size)),
                    None => {
                        for _ in 0..count {
                            self.skip_value(reader, element_kind, key, depth + 1)?;
                        }
                        Ok(())
                    }
                }
            }
            _ => Err(Scan::Unreadable),
        }
    }
}

fn skip<R: Seek>(reader: &mut R, bytes: u64) -> Result<(), Scan> {
    let bytes = i64::try_from(bytes).map_err(|_| Scan::Unreadable)?;
    reader.seek(SeekFrom::Current(bytes))?;
    Ok(())
}

fn read_u32<R: Read>(reader: &mut R) -> Result<u32, Scan> {
    let mut bytes = [0u8; 4];
    reader.read_exact(&mut bytes)?;
    Ok(u32::from_le_bytes(bytes))
}

fn read_u64<R: Read>(reader: &mut R) -> Result<u64, Scan> {
    let mut bytes = [0u8; 8];
    reader.read_exact(&mut bytes)?;
    Ok(u64::from_le_bytes(bytes))
}

/// Sizes the runtime allocates from metadata, bounded: the context window (RoPE tables for all
/// of it are built at load) and the block count (one layer each, at most one per tensor).
pub(crate) fn check_dimensions(content: &gguf_file::Content) -> Result<(), String> {
    let md = &content.metadata;
    let Some(architecture) = md.get("general.architecture").and_then(|v| v.to_string().ok()) else { return Ok(()) };
    let number = |name: &str| md.get(&format!("{architecture}.{name}")).and_then(|v| v.to_u64().ok());
    if let Some(context) = number("context_length") {
        if context == 0 || context > MAX_CONTEXT_LENGTH {
            return Err(format!(
                "metadata {architecture}.context_length is {context}; a context of 1 to {MAX_CONTEXT_LENGTH} tokens is supported"
            ));
        }
        let heads = number("attention.head_count").filter(|&h| h > 0);
        let head_width = number("attention.key_length").or_else(|| Some(number("embedding_length")? / heads?));
        if let Some(rotary) = number("rope.dimension_count").or(head_width) {
            let table = context.saturating_mul(rotary).saturating_mul(4);
            if table > MAX_ROPE_TABLE_BYTES {
                return Err(format!(
                    "metadata {architecture}.context_length {context} with {rotary} rotary dimensions needs {} MiB of RoPE tables (at most {} MiB)",
                    table >> 20,
                    MAX_ROPE_TABLE_BYTES >> 20
                ));
            }
        }
    }
    if let Some(blocks) = number("block_count") {
        let tensors = content.tensor_infos.len() as u64;
        if blocks > tensors {
            return Err(format!("metadata {architecture}.block_count is {blocks}, but the file has {tensors} tensors"));
        }
    }
    Ok(())
}
