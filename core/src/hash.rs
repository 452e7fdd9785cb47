//! FNV-1a, 64 bits: the one hash heisen uses where a name or a text must
//! map to the same number in every process and every run (a region name
//! cut by `report::region_name`, a node's host key, a schedule's
//! fingerprint). Not for hash tables of untrusted keys.

/// FNV-1a's 64-bit offset basis.
pub const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a's 64-bit prime.
pub const PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a of `bytes`, starting from `offset` (another basis gives an
/// independent second hash).
pub const fn fnv1a_from(offset: u64, bytes: &[u8]) -> u64 {
    let mut hash = offset;
    let mut i = 0;
    while i < bytes.len() {
        hash = (hash ^ bytes[i] as u64).wrapping_mul(PRIME);
        i += 1;
    }
    hash
}

/// FNV-1a of `bytes`.
pub const fn fnv1a(bytes: &[u8]) -> u64 {
    fnv1a_from(OFFSET, bytes)
}

#[cfg(test)]
mod tests {
    /// The published test vectors of 64-bit FNV-1a.
    #[test]
    fn known_values() {
        assert_eq!(super::fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(super::fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(super::fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
