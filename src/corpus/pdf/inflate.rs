//! The inflated-size limit for PDFs. The 32 MiB limit is on the file, but lopdf inflates
//! Flate streams (page contents, object streams) without a limit: a few MB of deflated zeros
//! become gigabytes, and the failed allocation aborts the process (an abort is no panic, so the
//! panic guard cannot contain it). Before lopdf sees a file, every zlib stream in it is inflated
//! into a counter, never into memory, and a document whose streams inflate to more than the
//! limit in total is refused by name.

use crate::corpus::DocumentProblem;
use std::io::Read;

/// Text manuals inflate to a few MB; images in PDFs are mostly JPEG (not zlib) and are
/// not decoded by the text reader anyway. 256 MiB leaves room for large manuals while keeping
/// what lopdf may allocate far from what aborts a process.
pub(crate) const MAX_INFLATED_BYTES: u64 = 256 << 20;

/// Err when the zlib streams of `bytes` inflate to more than `limit` bytes together.
pub(crate) fn check_inflated_size(bytes: &[u8], limit: u64) -> Result<(), DocumentProblem> {
    let mut total = 0u64;
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
        let left = limit - total;
        // Not zlib data (other filters, plain text) stops the decoder at once: counted as 0.
        let decoder = flate2::read::ZlibDecoder::new(&bytes[start..]);
        let mut counted = 0u64;
        let mut limited = decoder.take(left + 1);
        let mut buf = [0u8; 64 * 1024];
        loop {
            match limited.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => counted += n as u64,
            }
        }
        total += counted;
        if total > limit {
            return Err(DocumentProblem::PdfUnreadable {
                message: format!(
                    "its compressed streams inflate to more than {} MiB (a decompression bomb?); not read",
                    limit >> 20
                ),
            });
        }
    }
    Ok(())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
