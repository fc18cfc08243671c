//! CRC-32 (IEEE 802.3, the zlib/PNG polynomial), nibble-table form: 64 bytes of table, small
//! enough for a microcontroller's flash.

const POLY: u32 = 0xEDB8_8320;

const fn make_table() -> [u32; 16] {
    let mut t = [0u32; 16];
    let mut i = 0;
    while i < 16 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 4 {
            c = if c & 1 != 0 { (c >> 1) ^ POLY } else { c >> 1 };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

const TABLE: [u32; 16] = make_table();

/// CRC-32 of `data`.
#[must_use]
pub fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c ^= b as u32;
        c = (c >> 4) ^ TABLE[(c & 15) as usize];
        c = (c >> 4) ^ TABLE[(c & 15) as usize];
    }
    !c
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_vectors() {
        assert_eq!(super::crc32(b""), 0);
        assert_eq!(super::crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(super::crc32(b"The quick brown fox jumps over the lazy dog"), 0x414F_A339);
    }
}
