//! The shape of a finding's message: what stays the same when one cause shows in several
//! pairs, cases and machines. Quoted text (`` `…` ``, `'…'`, `"…"`: commands, names, a tool's
//! own quoting), path-like words and numbers are abstracted away; the words around them
//! say what happened.

/// `message` with every quoted span replaced by `‹q›`, every word holding a `/` by `‹path›`
/// and every run of digits by `N`, and runs of white space made one space.
///
/// ```
/// use snapconf_harness::checks::message_shape;
/// assert_eq!(
///     message_shape("`tar -xf /j/a.tar` exited with status 2: tar: a/b: Cannot open"),
///     message_shape("`bsdtar -xf /k/x.tar` exited with status 1: tar: c/d/e: Cannot open"),
/// );
/// ```
pub fn message_shape(message: &str) -> String {
    let mut unquoted = String::with_capacity(message.len());
    let mut open: Option<char> = None;
    for c in message.chars() {
        match open {
            Some(q) if c == q => open = None,
            Some(_) => {}
            None if c == '`' || c == '"' => {
                open = Some(c);
                unquoted.push_str("‹q›");
            }
            // An apostrophe inside a word (`can't`) is not a quote.
            None if c == '\'' && !unquoted.ends_with(|p: char| p.is_alphanumeric()) => {
                open = Some(c);
                unquoted.push_str("‹q›");
            }
            None => unquoted.push(c),
        }
    }
    let mut out = String::with_capacity(unquoted.len());
    for word in unquoted.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        if word.contains('/') {
            out.push_str("‹path›");
            continue;
        }
        let mut digits = false;
        for c in word.chars() {
            if c.is_ascii_digit() {
                if !digits {
                    out.push('N');
                }
                digits = true;
            } else {
                digits = false;
                out.push(c);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::message_shape;

    #[test]
    fn names_numbers_and_quotes_are_abstracted_and_words_kept() {
        assert_eq!(
            message_shape("refused member `a\nb` (1234 bytes): can't write 'x y' at /j/h-2"),
            "refused member ‹q› (N bytes): can't write ‹q› at ‹path›"
        );
        assert_ne!(
            message_shape("tar: a: Cannot open: File exists"),
            message_shape("tar: a: Cannot mknod: Operation not permitted")
        );
    }

    #[test]
    fn an_unclosed_quote_swallows_the_rest_but_never_panics() {
        assert_eq!(message_shape("bad `quote here"), "bad ‹q›");
        assert_eq!(message_shape(""), "");
    }
}
