//! A response body read with a size cap. Inference servers and users' own services answer
//! with text; a server that keeps sending (a misconfigured proxy, a file, a hostile endpoint)
//! must not fill memory, so every reader of a response goes through [`CappedBody`], which ends
//! with [`BodyTooLarge`] — an error, never a silently cut answer — one byte past the cap.

use std::io::{self, Read};

/// The most a served model's or a user service's response may hold. An answer, a stream of
/// its chunks, or a model list is far smaller.
pub const MAX_RESPONSE_BYTES: u64 = 16 << 20;

/// The response passed its cap.
#[derive(Debug, thiserror::Error)]
#[error("the response passed {} MiB; stopped reading (an answer is text, not a download)", .limit >> 20)]
pub struct BodyTooLarge {
    pub limit: u64,
}

/// `inner`, read up to `limit` bytes; one byte more is an error.
pub struct CappedBody<R> {
    inner: R,
    left: u64,
    limit: u64,
}

impl<R: Read> CappedBody<R> {
    pub fn new(inner: R, limit: u64) -> Self {
        CappedBody { inner, left: limit, limit }
    }
}

impl<R: Read> Read for CappedBody<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            // At the cap: the body is over only if there is more.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(io::Error::other(BodyTooLarge { limit: self.limit })),
            };
        }
        let want = buf.len().min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// Whether `error` is a [`CappedBody`] passing its cap (not worth another try).
pub fn is_too_large(error: &io::Error) -> bool {
    error.get_ref().is_some_and(|inner| inner.is::<BodyTooLarge>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_at_the_cap_reads_whole_and_one_byte_more_is_an_error() {
        let mut text = String::new();
        CappedBody::new(&b"12345"[..], 5).read_to_string(&mut text).unwrap();
        assert_eq!(text, "12345");
        let err = CappedBody::new(&b"123456"[..], 5).read_to_string(&mut String::new()).unwrap_err();
        assert!(is_too_large(&err), "{err}");
        assert!(!is_too_large(&io::Error::other("other")));
    }
}
