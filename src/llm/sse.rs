//! Reading a server-sent-events stream: each event's `data:` lines joined, handed over when
//! the blank line that ends the event arrives (or the stream ends). Inference servers and
//! users' own services stream answers this way; both readers share this one.

use std::io::{BufRead, BufReader, Read};
use std::ops::ControlFlow;

/// Calls `on_data` with each event's data until it breaks or the stream ends; `cancelled` is
/// asked before each line. Returns the number of events handed over.
pub fn read_events<E>(
    reader: impl Read,
    cancelled: &dyn Fn() -> bool,
    mut on_data: impl FnMut(&str) -> Result<ControlFlow<()>, E>,
    on_io_error: impl Fn(std::io::Error, usize) -> E,
    on_cancel: impl Fn() -> E,
) -> Result<usize, E> {
    let mut events = 0usize;
    let mut data = String::new();
    let mut lines = BufReader::new(reader).lines();
    loop {
        if cancelled() {
            return Err(on_cancel());
        }
        let line = match lines.next() {
            Some(Ok(line)) => Some(line.strip_suffix('\r').map(str::to_string).unwrap_or(line)),
            Some(Err(e)) => return Err(on_io_error(e, events)),
            None => None,
        };
        match &line {
            Some(l) if !l.is_empty() => {
                // Other fields (event:, id:, retry:) and comments carry no data.
                if let Some(d) = l.strip_prefix("data:") {
                    if !data.is_empty() {
                        data.push('\n');
                    }
                    data.push_str(d.strip_prefix(' ').unwrap_or(d));
                }
            }
            // A blank line, or the end of the stream, ends the event.
            _ if !data.is_empty() => {
                events += 1;
                let event = std::mem::take(&mut data);
                if on_data(&event)?.is_break() {
                    return Ok(events);
                }
            }
            _ => {}
        }
        if line.is_none() {
            return Ok(events);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_join_their_data_lines_and_skip_other_fields() {
        let stream = ": comment\r\nevent: delta\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\ndata: two\n\ndata: three";
        let mut seen = Vec::new();
        let n = read_events(
            stream.as_bytes(),
            &|| false,
            |d| {
                seen.push(d.to_string());
                Ok::<_, String>(ControlFlow::Continue(()))
            },
            |e, _| e.to_string(),
            || "cancelled".to_string(),
        )
        .unwrap();
        assert_eq!(n, 3);
        assert_eq!(seen, ["{\"a\":\n1}", "two", "three"]);
    }
}
