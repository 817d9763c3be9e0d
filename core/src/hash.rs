//! Stable 64-bit content hashes for cache keys (the same on every machine and run; not a
//! security boundary).

/// FNV-1a over byte strings, each followed by a separator, so `["ab", "c"]` and `["a", "bc"]`
/// differ.
#[derive(Clone, Copy, Debug)]
pub struct Fnv64(u64);

impl Default for Fnv64 {
    fn default() -> Self {
        Fnv64(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv64 {
    /// Adds one byte string.
    pub fn write(&mut self, bytes: &[u8]) -> &mut Self {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.0 = (self.0 ^ 0xff).wrapping_mul(0x0000_0100_0000_01b3);
        self
    }

    /// Adds a large array by its CRC-32 and length (CRC runs at memory speed; FNV byte by byte
    /// would not on a graph of billions of edges).
    pub fn write_bulk(&mut self, bytes: &[u8]) -> &mut Self {
        self.write(&(bytes.len() as u64).to_le_bytes()).write(&crc32fast::hash(bytes).to_le_bytes())
    }

    /// The hash.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

/// The hash of `parts`.
pub fn fnv64(parts: &[&[u8]]) -> u64 {
    let mut h = Fnv64::default();
    for p in parts {
        h.write(p);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_separated_and_stable() {
        assert_ne!(fnv64(&[b"ab", b"c"]), fnv64(&[b"a", b"bc"]));
        // Pinned: cache files written by one build are read by the next.
        assert_eq!(fnv64(&[b"wayfarer"]), fnv64(&[b"wayfarer"]));
        assert_eq!(Fnv64::default().write(b"").finish(), 0xaf64_724c_8602_eb6e);
    }
}
