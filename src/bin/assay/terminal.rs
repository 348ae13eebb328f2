//! Text for the terminal: model output can hold escape sequences that would repaint or hijack
//! the user's terminal, so control characters are made visible before anything is printed.

/// One line of untrusted text, control characters escaped, cut to `width` characters.
pub fn line(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut count = 0;
    for c in text.chars() {
        let piece = match c {
            '\n' | '\r' | '\t' => " ".to_string(),
            c if c.is_control() => c.escape_default().to_string(),
            c => c.to_string(),
        };
        let len = piece.chars().count();
        if count + len > width {
            out.push('…');
            return out;
        }
        count += len;
        out.push_str(&piece);
    }
    out
}

/// Untrusted text of any length (a judge's prompt, a GGUF's name): line breaks and tabs kept,
/// every other control character (ESC, BEL, C1 controls) made visible.
pub fn text(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\n' | '\t' => c.to_string(),
            c if c.is_control() => c.escape_default().to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// Pad to `width` characters (by chars, not bytes).
pub fn pad(text: &str, width: usize) -> String {
    let len = text.chars().count();
    if len >= width {
        text.to_string()
    } else {
        format!("{text}{}", " ".repeat(width - len))
    }
}
