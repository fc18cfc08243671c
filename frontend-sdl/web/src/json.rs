//! A small JSON writer for the descriptions the JavaScript side parses once per load (names,
//! counts, buffer addresses): strings escaped, floats in their shortest round-trip form. Its
//! methods stay out of line (`#[inline(never)]`): a description makes hundreds of calls, and
//! inlined copies of them grow the module every page downloads.

use alloc::string::String;
use core::fmt::Write;

/// JSON text under construction. Callers write the punctuation; this escapes and formats.
#[derive(Debug, Default)]
pub struct Json {
    /// The text so far.
    pub out: String,
}

impl Json {
    /// Appends raw JSON text (punctuation, keys known to need no escaping).
    #[inline(never)]
    pub fn raw(&mut self, s: &str) -> &mut Self {
        self.out.push_str(s);
        self
    }

    /// Appends `s` as a JSON string.
    #[inline(never)]
    pub fn string(&mut self, s: &str) -> &mut Self {
        self.out.push('"');
        for c in s.chars() {
            match c {
                '"' => self.out.push_str("\\\""),
                '\\' => self.out.push_str("\\\\"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(self.out, "\\u{:04x}", c as u32);
                }
                c => self.out.push(c),
            }
        }
        self.out.push('"');
        self
    }

    /// Appends an unsigned integer.
    #[inline(never)]
    pub fn uint(&mut self, v: usize) -> &mut Self {
        let _ = write!(self.out, "{v}");
        self
    }

    /// Appends a float as its IEEE 754 bits, an unsigned integer (`js/sinew.js` reads it back
    /// exactly; printing decimals would link the float formatter, a tenth of the module).
    pub fn float(&mut self, v: f32) -> &mut Self {
        self.uint(v.to_bits() as usize)
    }

    /// Appends `"key":`.
    pub fn key(&mut self, key: &str) -> &mut Self {
        self.string(key).raw(":")
    }

    /// Appends a JSON array of floats (as [`Json::float`] writes them).
    #[inline(never)]
    pub fn floats(&mut self, v: &[f32]) -> &mut Self {
        self.out.push('[');
        for (i, &x) in v.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.float(x);
        }
        self.out.push(']');
        self
    }

    /// Appends `value` or `null`.
    pub fn opt_uint(&mut self, value: Option<usize>) -> &mut Self {
        match value {
            Some(v) => self.uint(v),
            None => self.raw("null"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped_and_floats_are_their_bits() {
        let mut j = Json::default();
        j.raw("{").key("a\"b").string("x\\\n").raw(",").key("f").floats(&[0.1, -2.0]).raw("}");
        assert_eq!(j.out, r#"{"a\"b":"x\\\u000a","f":[1036831949,3221225472]}"#);
    }
}
