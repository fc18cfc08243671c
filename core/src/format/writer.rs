//! An allocation-free emitter for `.sinew` files: it writes into a caller buffer and keeps
//! counting past its end, so a first pass with an empty buffer measures the size.

use super::crc::crc32;
use super::{CRC_START, HEADER_LEN, MAGIC, SECTION_ENTRY_LEN, VERSION};

/// Writes little-endian values into a caller-owned buffer.
///
/// Writes past the end of the buffer are dropped but counted: [`Writer::len`] is the size the
/// file needs, and [`Writer::overflowed`] tells whether the buffer was too small.
#[derive(Debug)]
pub struct Writer<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> Writer<'a> {
    /// A writer at the start of `buf`.
    pub fn new(buf: &'a mut [u8]) -> Self {
        Writer { buf, len: 0 }
    }
    /// Bytes written (or that would have been written).
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }
    /// True when nothing has been written.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// True when the buffer was too small for what was written.
    #[must_use]
    pub fn overflowed(&self) -> bool {
        self.len > self.buf.len()
    }
    /// Appends raw bytes.
    pub fn bytes(&mut self, b: &[u8]) {
        if let Some(dst) = self.buf.get_mut(self.len..self.len + b.len()) {
            dst.copy_from_slice(b);
        }
        self.len += b.len();
    }
    /// Appends a `u8`.
    pub fn u8(&mut self, v: u8) {
        self.bytes(&[v]);
    }
    /// Appends a little-endian `u16`.
    pub fn u16(&mut self, v: u16) {
        self.bytes(&v.to_le_bytes());
    }
    /// Appends a little-endian `i16`.
    pub fn i16(&mut self, v: i16) {
        self.bytes(&v.to_le_bytes());
    }
    /// Appends a little-endian `u32`.
    pub fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }
    /// Appends a little-endian `f32`.
    pub fn f32(&mut self, v: f32) {
        self.bytes(&v.to_le_bytes());
    }
    /// Appends a string with a `u8` length prefix, truncated to 255 bytes at a character
    /// boundary.
    pub fn str(&mut self, s: &str) {
        let mut n = s.len().min(255);
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        self.u8(n as u8);
        self.bytes(&s.as_bytes()[..n]);
    }
    /// Overwrites bytes at `at` (a position already written).
    pub fn patch_bytes(&mut self, at: usize, b: &[u8]) {
        if let Some(dst) = self.buf.get_mut(at..at + b.len()) {
            dst.copy_from_slice(b);
        }
    }
    /// Overwrites a `u32` at `at` (a position already written).
    pub fn patch_u32(&mut self, at: usize, v: u32) {
        if let Some(dst) = self.buf.get_mut(at..at + 4) {
            dst.copy_from_slice(&v.to_le_bytes());
        }
    }
    /// Writes the header and a section table for `section_count` sections, to be filled with
    /// [`Writer::section`]. Returns the table's position.
    pub fn begin_file(&mut self, section_count: u32) -> usize {
        self.bytes(&MAGIC);
        self.u16(VERSION);
        self.u16(0);
        self.u32(0); // file length, patched by finish
        self.u32(0); // checksum, patched by finish
        self.u32(section_count);
        let table = self.len;
        for _ in 0..section_count {
            self.bytes(&[0; SECTION_ENTRY_LEN]);
        }
        table
    }
    /// Records section `index` of the table at `table`: `kind`, from `start` to the current
    /// position.
    pub fn section(&mut self, table: usize, index: usize, kind: [u8; 4], start: usize) {
        let at = table + index * SECTION_ENTRY_LEN;
        if let Some(dst) = self.buf.get_mut(at..at + 4) {
            dst.copy_from_slice(&kind);
        }
        self.patch_u32(at + 4, start as u32);
        self.patch_u32(at + 8, (self.len - start) as u32);
    }
    /// Patches the file length and checksum. Returns the file's length; the file is complete
    /// when [`Writer::overflowed`] is false.
    pub fn finish(&mut self) -> usize {
        let len = self.len;
        self.patch_u32(12, len as u32);
        if !self.overflowed() && len >= HEADER_LEN {
            let crc = crc32(&self.buf[CRC_START..len]);
            self.patch_u32(16, crc);
        }
        len
    }
}
