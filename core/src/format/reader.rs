//! Little-endian reads from a byte slice at any alignment: the bounds-checked [`Reader`] of the
//! parser, and the plain loads that read validated data (0 past the end, never a panic).

use super::ParseError;

/// Reads little-endian values from a byte slice, failing with [`ParseError::Truncated`] instead
/// of reading past the end.
#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    section: u16,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Reader { data, pos: 0, section: u16::MAX }
    }
    /// A reader whose value errors name `section`.
    pub(crate) fn for_section(data: &'a [u8], section: u16) -> Self {
        Reader { data, pos: 0, section }
    }
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }
    /// The bytes read since position `start`.
    pub(crate) fn taken(&self, start: usize) -> &'a [u8] {
        self.data.get(start..self.pos).unwrap_or(&[])
    }
    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8], ParseError> {
        let end = self.pos.checked_add(n).ok_or(ParseError::Truncated)?;
        let s = self.data.get(self.pos..end).ok_or(ParseError::Truncated)?;
        self.pos = end;
        Ok(s)
    }
    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], ParseError> {
        let s = self.bytes(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
    pub(crate) fn u8(&mut self) -> Result<u8, ParseError> {
        Ok(self.array::<1>()?[0])
    }
    pub(crate) fn u16(&mut self) -> Result<u16, ParseError> {
        Ok(u16::from_le_bytes(self.array()?))
    }
    pub(crate) fn u32(&mut self) -> Result<u32, ParseError> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    pub(crate) fn f32(&mut self) -> Result<f32, ParseError> {
        Ok(f32::from_le_bytes(self.array()?))
    }
    /// A finite f32 (checked on the bits, so no floating-point operation is involved).
    pub(crate) fn finite_f32(&mut self) -> Result<f32, ParseError> {
        let v = self.f32()?;
        if is_finite_bits(v.to_bits()) {
            Ok(v)
        } else {
            Err(ParseError::NonFinite { section: self.section })
        }
    }
    /// A length-prefixed (u8) UTF-8 string.
    pub(crate) fn str(&mut self) -> Result<&'a str, ParseError> {
        let n = self.u8()? as usize;
        core::str::from_utf8(self.bytes(n)?).map_err(|_| ParseError::BadName { section: self.section })
    }
}

/// True unless the bits encode NaN or ±∞.
#[inline]
pub(crate) fn is_finite_bits(bits: u32) -> bool {
    (bits >> 23) & 0xff != 0xff
}

/// Maps f32 bits to an integer with the same order as the floats (for finite values), so
/// times can be compared without floating-point instructions.
#[inline]
pub(crate) fn ordered_bits(bits: u32) -> i32 {
    if bits >> 31 != 0 {
        // Negative: larger magnitude is smaller. -0.0 maps next to +0.0.
        -((bits & 0x7fff_ffff) as i32)
    } else {
        bits as i32
    }
}

/// The byte at `at`, or 0 past the end (callers index validated data).
#[inline(always)]
pub(crate) fn byte(d: &[u8], at: usize) -> u8 {
    d.get(at).copied().unwrap_or(0)
}

/// Reads a little-endian u16 at `off`, or 0 past the end (callers index validated data).
#[inline(always)]
pub(crate) fn le_u16(d: &[u8], off: usize) -> u16 {
    match d.get(off..off.wrapping_add(2)) {
        Some(s) => u16::from_le_bytes([s[0], s[1]]),
        None => 0,
    }
}

/// Reads a little-endian u32 at `off`, or 0 past the end.
#[inline(always)]
pub(crate) fn le_u32(d: &[u8], off: usize) -> u32 {
    match d.get(off..off.wrapping_add(4)) {
        Some(s) => u32::from_le_bytes([s[0], s[1], s[2], s[3]]),
        None => 0,
    }
}

/// Reads a little-endian f32 at `off`, or 0 past the end.
#[inline(always)]
pub(crate) fn le_f32(d: &[u8], off: usize) -> f32 {
    f32::from_bits(le_u32(d, off))
}
