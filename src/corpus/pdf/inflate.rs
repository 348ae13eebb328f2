//! The decoded-size budget for PDFs. The 128 MiB limit is on the file, but lopdf decodes a
//! stream's filters (Flate, LZW, ASCII85, in any number of layers) into memory without a limit:
//! a few KB of deflated zeros deflated again become gigabytes, and the failed allocation aborts
//! the process (an abort is no panic, so the panic guard cannot contain it). Before lopdf sees
//! a file, every stream in it is decoded through the filters its dictionary names, layer by
//! layer, into a counter, never into memory; every layer's output counts (lopdf holds each one),
//! and a document whose streams decode to more than the limit in all is refused by name.
//!
//! The decoders follow lopdf's own (0.42): Flate falls back to raw deflate after the two header
//! bytes when the zlib header is wrong, so a stream is counted from its third byte on as raw
//! deflate, which counts what either path would produce; LZW with or without the early code
//! size change (`/EarlyChange`); ASCII85 with `z` for four zero bytes. A filter lopdf does not
//! decode ends the chain there, as it does.

use crate::corpus::DocumentProblem;
use std::cell::Cell;
use std::io::Read;
use std::rc::Rc;

/// Text manuals decode to a few MB (real PDFs measured 1-5x their file size: two 3-4 MB
/// budget documents with charts 3.8x); images in PDFs are mostly JPEG (not decoded by lopdf)
/// and are not drawn by the text reader anyway. 256 MiB leaves room for large reports while keeping
/// what lopdf may allocate far from what aborts a process.
pub(crate) const MAX_DECODED_BYTES: u64 = 256 << 20;

/// How far back from a `stream` keyword its dictionary (and its `/Filter`) is looked for.
const DICTIONARY_WINDOW: usize = 4096;

/// Err when the streams of the file `bytes` decode to more than `limit` bytes together,
/// counting every filter layer's output.
pub(crate) fn check_decoded_size(bytes: &[u8], limit: u64) -> Result<(), DocumentProblem> {
    let budget = Budget::new(limit);
    let mut from = 0;
    while let Some(found) = find(&bytes[from..], b"stream") {
        let keyword = from + found;
        from = keyword + b"stream".len();
        if bytes[..keyword].ends_with(b"end") {
            continue;
        }
        // The data starts after the end of line that follows the keyword.
        let mut start = from;
        if bytes.get(start) == Some(&b'\r') {
            start += 1;
        }
        if bytes.get(start) == Some(&b'\n') {
            start += 1;
        }
        let dictionary = stream_dictionary(&bytes[..keyword]);
        let chain = FilterChain::from_dictionary(dictionary);
        let end = direct_length(dictionary)
            .and_then(|length| start.checked_add(length))
            .filter(|&end| end <= bytes.len())
            .or_else(|| find(&bytes[start..], b"endstream").map(|at| start + at))
            .unwrap_or(bytes.len());
        if !chain.count(&bytes[start..end], &budget) {
            return Err(too_large(limit));
        }
    }
    Ok(())
}

/// Err when the streams of a loaded document decode to more than `limit` bytes together,
/// counting every filter layer's output: for an encrypted file, whose streams were ciphertext
/// when `check_decoded_size` read it, once they are decrypted and before lopdf decodes any.
pub(crate) fn check_document_streams(doc: &pdf_extract::Document, limit: u64) -> Result<(), DocumentProblem> {
    let budget = Budget::new(limit);
    for object in doc.objects.values() {
        let Ok(stream) = object.as_stream() else { continue };
        if !FilterChain::from_stream(&stream.dict).count(&stream.content, &budget) {
            return Err(too_large(limit));
        }
    }
    Ok(())
}

#[cfg(test)]
/// What lopdf would allocate decoding `content` through `filters` (names as in the stream's
/// `/Filter`), or None when that passes `limit`.
pub(crate) fn decoded_len(content: &[u8], filters: &[&[u8]], early_change: bool, limit: u64) -> Option<u64> {
    let budget = Budget::new(limit);
    let chain = FilterChain { filters: filters.iter().map(|f| Filter::from_name(f)).collect(), early_change };
    chain.count(content, &budget).then(|| budget.used.get())
}

pub(crate) fn too_large(limit: u64) -> DocumentProblem {
    DocumentProblem::PdfUnreadable {
        message: format!("its streams decode to more than {} MiB (a decompression bomb?); not read", limit >> 20),
    }
}

/// What is left of the document's budget, shared by every layer of every stream.
struct Budget {
    used: Cell<u64>,
    limit: u64,
}

impl Budget {
    fn new(limit: u64) -> Self {
        Budget { used: Cell::new(0), limit }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Filter {
    Flate,
    Lzw,
    Ascii85,
    /// Any filter lopdf does not decode: its chain stops there.
    Other,
}

impl Filter {
    fn from_name(name: &[u8]) -> Filter {
        match name {
            b"FlateDecode" => Filter::Flate,
            b"LZWDecode" => Filter::Lzw,
            b"ASCII85Decode" => Filter::Ascii85,
            _ => Filter::Other,
        }
    }
}

struct FilterChain {
    filters: Vec<Filter>,
    early_change: bool,
}

impl FilterChain {
    /// The filters a raw dictionary names in its `/Filter` (a name or an array of names; a
    /// reference is not followed by lopdf, so it decodes nothing).
    fn from_dictionary(dictionary: &[u8]) -> FilterChain {
        let early_change = !contains_key_with_value(dictionary, b"/EarlyChange", b"0");
        let Some(at) = find(dictionary, b"/Filter") else {
            return FilterChain { filters: Vec::new(), early_change };
        };
        let rest = skip_space(&dictionary[at + b"/Filter".len()..]);
        let names: Vec<Vec<u8>> = if rest.first() == Some(&b'[') {
            let close = rest.iter().position(|&b| b == b']').unwrap_or(rest.len());
            rest[1..close].split(|&b| b == b'/').skip(1).map(name_token).collect()
        } else if rest.first() == Some(&b'/') {
            vec![name_token(&rest[1..])]
        } else {
            Vec::new()
        };
        FilterChain { filters: names.iter().map(|n| Filter::from_name(n)).collect(), early_change }
    }

    /// The filters a parsed stream dictionary names: `/Filter` a name or an array of names
    /// (other entries decode nothing, so they are left out), `/EarlyChange 0` in a
    /// `/DecodeParms` dictionary turning LZW's early change off, as lopdf reads them.
    fn from_stream(dictionary: &pdf_extract::Dictionary) -> FilterChain {
        use pdf_extract::Object;
        let names: Vec<Vec<u8>> = match dictionary.get(b"Filter") {
            Ok(Object::Name(name)) => vec![name.clone()],
            Ok(Object::Array(items)) => items.iter().filter_map(|item| item.as_name().ok().map(<[u8]>::to_vec)).collect(),
            _ => Vec::new(),
        };
        let early_change = dictionary
            .get(b"DecodeParms")
            .and_then(Object::as_dict)
            .and_then(|parameters| parameters.get(b"EarlyChange"))
            .and_then(Object::as_i64)
            .map_or(true, |value| value != 0);
        FilterChain { filters: names.iter().map(|n| Filter::from_name(n)).collect(), early_change }
    }

    /// Decode `content` through every layer, counting each layer's output against `budget`;
    /// false once the budget is passed.
    fn count(&self, content: &[u8], budget: &Budget) -> bool {
        let decodable: Vec<Filter> = self.filters.iter().copied().take_while(|f| *f != Filter::Other).collect();
        if decodable.is_empty() {
            return true;
        }
        let over = Rc::new(Cell::new(false));
        let mut reader: Box<dyn Read + '_> = Box::new(content);
        for filter in decodable {
            let decoded: Box<dyn Read + '_> = match filter {
                Filter::Flate => Box::new(RawDeflateAfterHeader::new(reader)),
                Filter::Lzw => Box::new(LzwReader::new(reader, self.early_change)),
                Filter::Ascii85 => Box::new(Ascii85Reader::new(reader)),
                Filter::Other => unreachable!("taken out above"),
            };
            reader = Box::new(Counted { inner: decoded, budget, over: over.clone() });
        }
        let mut scratch = vec![0u8; 64 * 1024];
        loop {
            match reader.read(&mut scratch) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
        !over.get()
    }
}

/// A layer's output counted against the budget; an error once it is passed, which stops every
/// layer above.
struct Counted<'a> {
    inner: Box<dyn Read + 'a>,
    budget: &'a Budget,
    over: Rc<Cell<bool>>,
}

impl Read for Counted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let used = self.budget.used.get() + n as u64;
        self.budget.used.set(used);
        if used > self.budget.limit {
            self.over.set(true);
            return Err(std::io::Error::other("over the decoded-size budget"));
        }
        Ok(n)
    }
}

/// Flate as lopdf reads it: zlib, or raw deflate after the two header bytes when the header is
/// wrong. Both decode the same deflate data after those two bytes, so that is what is counted.
struct RawDeflateAfterHeader<'a> {
    decoder: Option<flate2::read::DeflateDecoder<Box<dyn Read + 'a>>>,
    inner: Option<Box<dyn Read + 'a>>,
}

impl<'a> RawDeflateAfterHeader<'a> {
    fn new(inner: Box<dyn Read + 'a>) -> Self {
        RawDeflateAfterHeader { decoder: None, inner: Some(inner) }
    }
}

impl Read for RawDeflateAfterHeader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let Some(mut inner) = self.inner.take() {
            let mut header = [0u8; 2];
            inner.read_exact(&mut header)?;
            self.decoder = Some(flate2::read::DeflateDecoder::new(inner));
        }
        match &mut self.decoder {
            Some(decoder) => decoder.read(buf),
            None => Ok(0),
        }
    }
}

/// LZW (most significant bit first, 8-bit symbols, as lopdf configures weezl).
struct LzwReader<'a> {
    inner: Box<dyn Read + 'a>,
    decoder: weezl::decode::Decoder,
    input: Vec<u8>,
    at: usize,
    input_ended: bool,
    done: bool,
}

impl<'a> LzwReader<'a> {
    fn new(inner: Box<dyn Read + 'a>, early_change: bool) -> Self {
        use weezl::{decode::Decoder, BitOrder};
        let decoder = if early_change {
            Decoder::with_tiff_size_switch(BitOrder::Msb, 8)
        } else {
            Decoder::new(BitOrder::Msb, 8)
        };
        LzwReader { inner, decoder, input: Vec::new(), at: 0, input_ended: false, done: false }
    }
}

impl Read for LzwReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            if self.done || buf.is_empty() {
                return Ok(0);
            }
            if self.at == self.input.len() && !self.input_ended {
                self.input.resize(16 * 1024, 0);
                let n = self.inner.read(&mut self.input)?;
                self.input.truncate(n);
                self.at = 0;
                self.input_ended = n == 0;
            }
            let result = self.decoder.decode_bytes(&self.input[self.at..], buf);
            self.at += result.consumed_in;
            if matches!(result.status, Ok(weezl::LzwStatus::Done) | Err(_)) {
                self.done = true;
            }
            if result.consumed_out > 0 {
                return Ok(result.consumed_out);
            }
            // The decoder keeps output back until it is asked again; once the input has ended
            // and a call gives nothing, it is all out.
            if self.input_ended && result.consumed_in == 0 {
                self.done = true;
            }
        }
    }
}

/// ASCII85 as lopdf decodes it: whitespace skipped, `z` four zero bytes, stopping at the first
/// byte outside `!`..=`u` (the `~>` end marker among them).
struct Ascii85Reader<'a> {
    inner: Box<dyn Read + 'a>,
    group: [u8; 5],
    filled: usize,
    pending: Vec<u8>,
    done: bool,
}

impl<'a> Ascii85Reader<'a> {
    fn new(inner: Box<dyn Read + 'a>) -> Self {
        Ascii85Reader { inner, group: [0; 5], filled: 0, pending: Vec::new(), done: false }
    }

    fn flush_group(&mut self, count: usize) {
        let mut value: u32 = 0;
        for i in 0..5 {
            let digit = if i < count { self.group[i] - b'!' } else { 84 };
            value = value.wrapping_mul(85).wrapping_add(u32::from(digit));
        }
        let bytes = value.to_be_bytes();
        let kept = if count == 5 { 4 } else { count.saturating_sub(1) };
        self.pending.extend_from_slice(&bytes[..kept]);
    }
}

impl Read for Ascii85Reader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut input = [0u8; 4096];
        while self.pending.is_empty() && !self.done {
            let n = self.inner.read(&mut input)?;
            if n == 0 {
                self.done = true;
            }
            for &c in &input[..n] {
                if c == b'z' && self.filled == 0 {
                    self.pending.extend_from_slice(&[0; 4]);
                } else if c.is_ascii_whitespace() {
                } else if (b'!'..=b'u').contains(&c) {
                    self.group[self.filled] = c;
                    self.filled += 1;
                    if self.filled == 5 {
                        self.flush_group(5);
                        self.filled = 0;
                    }
                } else {
                    self.done = true;
                    break;
                }
            }
            if self.done && self.filled > 0 {
                let count = self.filled;
                self.filled = 0;
                self.flush_group(count);
            }
        }
        let n = self.pending.len().min(buf.len());
        buf[..n].copy_from_slice(&self.pending[..n]);
        self.pending.drain(..n);
        Ok(n)
    }
}

/// The dictionary before a `stream` keyword: from its object's `obj` keyword on, looked for in
/// the last `DICTIONARY_WINDOW` bytes.
fn stream_dictionary(before: &[u8]) -> &[u8] {
    let window = &before[before.len().saturating_sub(DICTIONARY_WINDOW)..];
    match rfind(window, b"obj") {
        Some(at) => &window[at..],
        None => window,
    }
}

/// `/Length N` when N is written in the dictionary (not a reference to another object).
fn direct_length(dictionary: &[u8]) -> Option<usize> {
    let at = find(dictionary, b"/Length")?;
    let rest = skip_space(&dictionary[at + b"/Length".len()..]);
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let length: usize = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
    let after = skip_space(&rest[digits..]);
    // `N 0 R` is a reference: its value is elsewhere.
    let generation = after.iter().take_while(|b| b.is_ascii_digit()).count();
    if generation > 0 && skip_space(&after[generation..]).first() == Some(&b'R') {
        return None;
    }
    Some(length)
}

fn contains_key_with_value(dictionary: &[u8], key: &[u8], value: &[u8]) -> bool {
    find(dictionary, key).is_some_and(|at| skip_space(&dictionary[at + key.len()..]).starts_with(value))
}

/// A name's characters up to the next delimiter, with `#xx` escapes decoded (lopdf decodes
/// them, so `/Fl#61teDecode` is Flate).
fn name_token(text: &[u8]) -> Vec<u8> {
    let end = text
        .iter()
        .position(|b| b.is_ascii_whitespace() || b"/[]<>()%".contains(b))
        .unwrap_or(text.len());
    let raw = &text[..end];
    let mut name = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'#' && i + 2 < raw.len() {
            if let Ok(byte) = u8::from_str_radix(std::str::from_utf8(&raw[i + 1..i + 3]).unwrap_or("zz"), 16) {
                name.push(byte);
                i += 3;
                continue;
            }
        }
        name.push(raw[i]);
        i += 1;
    }
    name
}

fn skip_space(text: &[u8]) -> &[u8] {
    let n = text.iter().take_while(|b| b.is_ascii_whitespace()).count();
    &text[n..]
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn deflate(data: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn every_layer_counts() {
        let once = deflate(&vec![0u8; 1 << 20]);
        let twice = deflate(&once);
        let total = decoded_len(&twice, &[b"FlateDecode", b"FlateDecode"], true, u64::MAX).unwrap();
        assert_eq!(total, once.len() as u64 + (1 << 20));
        assert_eq!(decoded_len(&twice, &[b"FlateDecode", b"FlateDecode"], true, 1 << 20), None);
    }

    #[test]
    fn a_wrong_zlib_header_is_counted_as_raw_deflate() {
        let mut data = deflate(&vec![7u8; 100_000]);
        data[0] = 0xFF;
        data[1] = 0xFF;
        assert_eq!(decoded_len(&data, &[b"FlateDecode"], true, u64::MAX), Some(100_000));
    }

    /// What lopdf itself allocates decoding `data` through `filters`: the oracle.
    fn lopdf_len(data: &[u8], filters: &[&str]) -> u64 {
        let names: Vec<pdf_extract::Object> = filters.iter().map(|f| pdf_extract::Object::Name(f.as_bytes().to_vec())).collect();
        let dict = pdf_extract::dictionary! { "Filter" => names };
        let stream = pdf_extract::Stream::new(dict, data.to_vec());
        // Every layer's output: decode one more layer at a time.
        (1..=filters.len())
            .map(|n| {
                let names: Vec<pdf_extract::Object> = filters[..n].iter().map(|f| pdf_extract::Object::Name(f.as_bytes().to_vec())).collect();
                let mut layer = stream.clone();
                layer.dict.set("Filter", names);
                layer.decompressed_content().unwrap().len() as u64
            })
            .sum()
    }

    #[test]
    fn lzw_and_ascii85_decode_as_lopdf_does() {
        let plain = b"the quick brown fox jumps over the lazy dog ".repeat(1000);
        let mut encoder = weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8);
        let lzw = encoder.encode(&plain).unwrap();
        assert_eq!(decoded_len(&lzw, &[b"LZWDecode"], true, u64::MAX), Some(plain.len() as u64));
        assert_eq!(lopdf_len(&lzw, &["LZWDecode"]), plain.len() as u64);
        // Full groups, "z", whitespace and a partial last group.
        for text in [&b"zz~>"[..], b"87cURD]i,\"Ebo80~>", b"87cUR D]i,\n\"Eb~>", b"9jqo^BlbD-BleB1DJ+*+F(f,q"] {
            assert_eq!(decoded_len(text, &[b"ASCII85Decode"], true, u64::MAX), Some(lopdf_len(text, &["ASCII85Decode"])), "{}", String::from_utf8_lossy(text));
        }
        let stacked = {
            let mut encoder = weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8);
            deflate(&encoder.encode(&plain).unwrap())
        };
        assert_eq!(
            decoded_len(&stacked, &[b"FlateDecode", b"LZWDecode"], true, u64::MAX),
            Some(lopdf_len(&stacked, &["FlateDecode", "LZWDecode"]))
        );
    }

    #[test]
    fn filters_are_read_from_the_raw_dictionary() {
        let chain = FilterChain::from_dictionary(b"4 0 obj << /Length 10 /Filter [ /ASCII85Decode /Fl#61teDecode ] >>");
        assert!(chain.filters == vec![Filter::Ascii85, Filter::Flate]);
        assert_eq!(direct_length(b"<< /Length 10 /Filter /FlateDecode >>"), Some(10));
        assert_eq!(direct_length(b"<< /Length 7 0 R >>"), None);
    }
}
