//! The piggyback record that every dependency carries to its merge (R3), and
//! its fixed-size, versioned, little-endian wire encoding.
//!
//! The record is plain `Copy` data with a `#[repr(C)]` layout, so thread
//! backends can keep it in a seqlock, the MPI backend can keep it alive in a
//! request map between `Isend` and `Wait`, and the FFI can hand it across
//! the C boundary unchanged.

use core::fmt;

/// Location id used for records that no location produced (an empty record).
pub const NO_LOCATION: u32 = u32::MAX;

/// Flag bits of a [`Piggyback`]: which parts of the record carry data.
///
/// A record with no flag set is what an uninstrumented peer "sends": merging
/// it leaves the state unchanged (R3, 003 §2.3 case 4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[repr(transparent)]
pub struct Flags(pub u32);

impl Flags {
    /// No data: an uninstrumented or not-yet-started sender.
    pub const NONE: Flags = Flags(0);
    /// `delay` is valid (R4).
    pub const DELAY: Flags = Flags(1);
    /// `approximated` is valid: the sender's clock is comparable (R5).
    pub const TIMESTAMP: Flags = Flags(1 << 1);
    /// `longest`, `transfer`, the shares and the nets are valid (R7, R9).
    pub const PATH: Flags = Flags(1 << 2);
    /// Every bit this version of the encoding knows.
    pub const ALL: Flags = Flags(0b111);

    /// Whether every bit of `other` is set in `self`.
    #[inline]
    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }

    /// The union of two flag sets.
    #[inline]
    #[must_use]
    pub const fn with(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }
}

/// The record a dependency (send, unlock, barrier arrival, enqueue, thread
/// end) carries to its merge (R3).
///
/// `K` is the number of selected regions whose critical-path shares and
/// nets travel with it; it is fixed for a run.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct Piggyback<const K: usize> {
    /// Which fields carry data.
    pub flags: Flags,
    /// The releasing location; breaks ties between equal path lengths (R7).
    pub location: u32,
    /// The sender's delay `x` at the release point (R3, 000 §3.1.1).
    pub delay: u64,
    /// The sender's approximated release time `a = t - x` (R5).
    pub approximated: i64,
    /// Critical-path length `L` ending at the release point (R7, 003 Fig. 2).
    pub longest: i64,
    /// The part of `longest` spent in transfers, the `(transfer)` pseudo-region (R7).
    pub transfer: i64,
    /// Inclusive share `s[k]` of `longest` per selected region (R7).
    pub inclusive: [i64; K],
    /// Exclusive share of `longest` per selected region (R7).
    pub exclusive: [i64; K],
    /// Net length `n[k]`: the longest chain with region `k` counted as zero
    /// (critical-path zeroing, 003 §2.4, Fig. 4).
    pub net: [i64; K],
}

impl<const K: usize> Piggyback<K> {
    /// The data-less record of an uninstrumented or stopped sender (R3, R9).
    pub const EMPTY: Self = Piggyback {
        flags: Flags::NONE,
        location: NO_LOCATION,
        delay: 0,
        approximated: 0,
        longest: 0,
        transfer: 0,
        inclusive: [0; K],
        exclusive: [0; K],
        net: [0; K],
    };

    /// Materialises a location's lazy path values (R7, 003 Fig. 2) held
    /// in this record's arrays at path clock `clock`: an open region's
    /// inclusive share and a closed one's net grow with the clock, and so
    /// does the exclusive share of the region on top (`top`; none beyond
    /// `K`).
    #[inline(always)]
    pub(crate) fn add_path_clock(&mut self, clock: i64, active: &[u32; K], top: u8) {
        let shares = self.inclusive.iter_mut().zip(self.net.iter_mut());
        for ((inclusive, net), frames) in shares.zip(active) {
            let open = *frames > 0;
            *inclusive += if open { clock } else { 0 };
            *net += if open { 0 } else { clock };
        }
        if let Some(e) = self.exclusive.get_mut(usize::from(top)) {
            *e += clock;
        }
    }

    /// Size in bytes of the wire encoding for this `K`.
    pub const ENCODED_LEN: usize = HEADER_LEN + 4 * 8 + 3 * 8 * K;

    /// The sender's measured release time `t = a + x`; meaningful only when
    /// the record has [`Flags::TIMESTAMP`] (clocks are comparable).
    #[inline]
    pub const fn measured(&self) -> i64 {
        self.approximated.wrapping_add(self.delay as i64)
    }

    /// Writes the wire encoding into `out` and returns the number of bytes
    /// written ([`Self::ENCODED_LEN`]).
    ///
    /// Layout (all little-endian): magic `"HB"` (2 bytes), version (1),
    /// `K` (1), flags (u32), location (u32), reserved (u32, zero), delay
    /// (u64), approximated, longest, transfer (i64 each), then `K` inclusive,
    /// `K` exclusive and `K` net shares (i64 each). Documented in
    /// `docs/piggyback.md`.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, EncodeError> {
        let needed = Self::ENCODED_LEN;
        if K > MAX_K {
            return Err(EncodeError::TooManyRegions { k: K });
        }
        let Some(out) = out.get_mut(..needed) else {
            return Err(EncodeError::BufferTooShort {
                needed,
                got: out.len(),
            });
        };
        out[0..2].copy_from_slice(&MAGIC);
        out[2] = VERSION;
        out[3] = K as u8;
        out[4..8].copy_from_slice(&self.flags.0.to_le_bytes());
        out[8..12].copy_from_slice(&self.location.to_le_bytes());
        out[12..16].copy_from_slice(&0u32.to_le_bytes());
        let (head, tail) = out[HEADER_LEN..].split_at_mut(32);
        head[0..8].copy_from_slice(&self.delay.to_le_bytes());
        head[8..16].copy_from_slice(&self.approximated.to_le_bytes());
        head[16..24].copy_from_slice(&self.longest.to_le_bytes());
        head[24..32].copy_from_slice(&self.transfer.to_le_bytes());
        let (inclusive, rest) = tail.split_at_mut(8 * K);
        let (exclusive, net) = rest.split_at_mut(8 * K);
        for (w, v) in inclusive.chunks_exact_mut(8).zip(&self.inclusive) {
            w.copy_from_slice(&v.to_le_bytes());
        }
        for (w, v) in exclusive.chunks_exact_mut(8).zip(&self.exclusive) {
            w.copy_from_slice(&v.to_le_bytes());
        }
        for (w, v) in net.chunks_exact_mut(8).zip(&self.net) {
            w.copy_from_slice(&v.to_le_bytes());
        }
        Ok(needed)
    }

    /// Decodes a record written by [`Self::encode`] with the same `K`.
    ///
    /// Never panics: a short buffer, foreign bytes (wrong magic, reserved
    /// bits set), another version or another `K` is a [`DecodeError`] that
    /// says which. Bytes past [`Self::ENCODED_LEN`] are ignored, so a record
    /// can be read from the front of a larger buffer.
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut record = Self::EMPTY;
        record.decode_into(bytes)?;
        Ok(record)
    }

    /// [`Self::decode`] into `self`, in place: a receiver that keeps the
    /// record where it is merged writes its 48 + 24·K bytes once instead of
    /// moving them. On an error `self` is left unchanged.
    #[inline]
    pub fn decode_into(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let needed = Self::ENCODED_LEN;
        if bytes.len() < HEADER_LEN.min(needed) || bytes.len() < 2 {
            return Err(DecodeError::Short {
                needed,
                got: bytes.len(),
            });
        }
        if bytes[0..2] != MAGIC {
            return Err(DecodeError::Foreign {
                found: [bytes[0], bytes[1]],
            });
        }
        if bytes.len() < HEADER_LEN {
            return Err(DecodeError::Short {
                needed,
                got: bytes.len(),
            });
        }
        if bytes[2] != VERSION {
            return Err(DecodeError::Version {
                found: bytes[2],
                expected: VERSION,
            });
        }
        if usize::from(bytes[3]) != K {
            return Err(DecodeError::WrongK {
                found: bytes[3],
                expected: K,
            });
        }
        if bytes.len() < needed {
            return Err(DecodeError::Short {
                needed,
                got: bytes.len(),
            });
        }
        let u32_at =
            |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        let flags = u32_at(4);
        if flags & !Flags::ALL.0 != 0 || u32_at(12) != 0 {
            return Err(DecodeError::Foreign {
                found: [bytes[0], bytes[1]],
            });
        }
        let mut words = bytes[HEADER_LEN..needed].chunks_exact(8).map(|w| {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            b
        });
        let mut next = || words.next().unwrap_or([0; 8]);
        let record = self;
        record.flags = Flags(flags);
        record.location = u32_at(8);
        record.delay = u64::from_le_bytes(next());
        record.approximated = i64::from_le_bytes(next());
        record.longest = i64::from_le_bytes(next());
        record.transfer = i64::from_le_bytes(next());
        for v in record.inclusive.iter_mut() {
            *v = i64::from_le_bytes(next());
        }
        for v in record.exclusive.iter_mut() {
            *v = i64::from_le_bytes(next());
        }
        for v in record.net.iter_mut() {
            *v = i64::from_le_bytes(next());
        }
        Ok(())
    }
}

impl<const K: usize> Default for Piggyback<K> {
    fn default() -> Self {
        Self::EMPTY
    }
}

/// A release's record kept in the sender's own lazy representation (R3,
/// R7): the path values of the selected regions as the location holds
/// them, with the path clock and which regions were open, so that taking
/// the record is a copy and the per-region arithmetic is done only by a
/// reader that needs the values ([`Pending::piggyback`]). For a lock,
/// whose next acquire is most often the releasing thread's own and merges
/// nothing, that moves the work off the common path. The values read back
/// are exactly those the release's [`Piggyback`] would carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pending<const K: usize> {
    /// The header as the piggyback carries it; the arrays hold the
    /// location's bases (for `inclusive` and `net`: before the open
    /// regions' and the closed regions' share of `clock` is added;
    /// `exclusive`: before the top region's).
    pub(crate) base: Piggyback<K>,
    /// The path clock at the release.
    pub(crate) clock: i64,
    /// Open frames per selected region (R7: an open region's inclusive
    /// share grows with the clock, a closed one's net does).
    pub(crate) active: [u32; K],
    /// The selected region on top of the stack, or none.
    pub(crate) top: u8,
}

impl<const K: usize> Pending<K> {
    /// No release yet: reads back as [`Piggyback::EMPTY`].
    pub const EMPTY: Self = Pending {
        base: Piggyback::EMPTY,
        clock: 0,
        active: [0; K],
        top: u8::MAX,
    };

    /// The releasing location (R7's tie-break; [`NO_LOCATION`] for none).
    #[inline]
    pub const fn location(&self) -> u32 {
        self.base.location
    }

    /// Which fields the record carries.
    #[inline]
    pub const fn flags(&self) -> Flags {
        self.base.flags
    }

    /// The record itself, materialised.
    #[inline]
    pub fn piggyback(&self) -> Piggyback<K> {
        let mut p = self.base;
        if p.flags.contains(Flags::PATH) {
            // (without path data, R9, the arrays are zero already)
            p.add_path_clock(self.clock, &self.active, self.top);
        }
        p
    }
}

impl<const K: usize> From<Piggyback<K>> for Pending<K> {
    /// A record already materialised (no region open, no clock to add).
    fn from(base: Piggyback<K>) -> Self {
        Pending {
            base,
            ..Pending::EMPTY
        }
    }
}

impl<const K: usize> Default for Pending<K> {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl<const K: usize> fmt::Debug for Piggyback<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Piggyback")
            .field("flags", &self.flags)
            .field("location", &self.location)
            .field("delay", &self.delay)
            .field("approximated", &self.approximated)
            .field("longest", &self.longest)
            .field("transfer", &self.transfer)
            .field("inclusive", &&self.inclusive[..])
            .field("exclusive", &&self.exclusive[..])
            .field("net", &&self.net[..])
            .finish()
    }
}

/// First two bytes of every encoded record: `"HB"`.
pub const MAGIC: [u8; 2] = *b"HB";
/// Version of the wire encoding written by this crate.
pub const VERSION: u8 = 1;
/// Largest `K` the encoding can carry (it is stored in one byte).
pub const MAX_K: usize = u8::MAX as usize;
const HEADER_LEN: usize = 16;

/// Why a buffer could not be decoded as a [`Piggyback`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The buffer ends before the record does.
    Short {
        /// Bytes a record of this `K` needs.
        needed: usize,
        /// Bytes the buffer has.
        got: usize,
    },
    /// The bytes are not a heisen piggyback (wrong magic or reserved bits).
    Foreign {
        /// The first two bytes found.
        found: [u8; 2],
    },
    /// A piggyback of another encoding version.
    Version {
        /// Version byte found.
        found: u8,
        /// Version this crate reads.
        expected: u8,
    },
    /// A piggyback carrying another number of selected regions.
    WrongK {
        /// `K` found in the record.
        found: u8,
        /// `K` of the reader.
        expected: usize,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DecodeError::Short { needed, got } => {
                write!(f, "short piggyback: {got} bytes, a record needs {needed}")
            }
            DecodeError::Foreign { found } => write!(
                f,
                "foreign bytes where a piggyback was expected (starts {:#04x} {:#04x}, expected \"HB\" and no reserved bits)",
                found[0], found[1]
            ),
            DecodeError::Version { found, expected } => write!(
                f,
                "piggyback version {found}, this heisen reads version {expected}"
            ),
            DecodeError::WrongK { found, expected } => write!(
                f,
                "piggyback carries {found} selected regions, this run selects {expected}"
            ),
        }
    }
}

impl core::error::Error for DecodeError {}

/// Why a [`Piggyback`] could not be encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncodeError {
    /// The output buffer is smaller than [`Piggyback::ENCODED_LEN`].
    BufferTooShort {
        /// Bytes needed.
        needed: usize,
        /// Bytes available.
        got: usize,
    },
    /// `K` exceeds [`MAX_K`].
    TooManyRegions {
        /// The record's `K`.
        k: usize,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            EncodeError::BufferTooShort { needed, got } => write!(
                f,
                "buffer of {got} bytes is too short for a piggyback of {needed} bytes"
            ),
            EncodeError::TooManyRegions { k } => {
                write!(
                    f,
                    "{k} selected regions exceed the encoding's maximum of {MAX_K}"
                )
            }
        }
    }
}

impl core::error::Error for EncodeError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Piggyback<2> {
        Piggyback {
            flags: Flags::ALL,
            location: 7,
            delay: 480,
            approximated: -3,
            longest: 1_000,
            transfer: 25,
            inclusive: [10, 20],
            exclusive: [5, 6],
            net: [990, 980],
        }
    }

    #[test]
    fn round_trip_k2() {
        let mut buf = [0u8; Piggyback::<2>::ENCODED_LEN];
        assert_eq!(sample().encode(&mut buf), Ok(96));
        assert_eq!(Piggyback::<2>::decode(&buf), Ok(sample()));
    }

    #[test]
    fn decode_into_overwrites_every_field_and_keeps_them_on_error() {
        let mut buf = [0u8; Piggyback::<2>::ENCODED_LEN];
        sample().encode(&mut buf).unwrap();
        // every field differs from the sample's before the decode
        let other = Piggyback::<2> {
            flags: Flags(0),
            location: 1,
            delay: 2,
            approximated: 3,
            longest: 4,
            transfer: 5,
            inclusive: [6, 7],
            exclusive: [8, 9],
            net: [10, 11],
        };
        let mut record = other;
        assert_eq!(record.decode_into(&buf), Ok(()));
        assert_eq!(record, sample());
        let mut kept = other;
        buf[2] = VERSION.wrapping_add(1);
        assert!(kept.decode_into(&buf).is_err());
        assert_eq!(kept, other);
    }

    #[test]
    fn encoding_is_little_endian_with_header() {
        let mut buf = [0u8; Piggyback::<2>::ENCODED_LEN];
        sample().encode(&mut buf).unwrap();
        assert_eq!(&buf[0..4], &[b'H', b'B', VERSION, 2]);
        assert_eq!(&buf[4..8], &[7, 0, 0, 0]);
        assert_eq!(&buf[8..12], &[7, 0, 0, 0]);
        assert_eq!(&buf[16..24], &480u64.to_le_bytes());
    }

    #[test]
    fn short_buffer_is_reported() {
        let mut buf = [0u8; Piggyback::<2>::ENCODED_LEN];
        sample().encode(&mut buf).unwrap();
        assert_eq!(
            Piggyback::<2>::decode(&buf[..40]),
            Err(DecodeError::Short {
                needed: 96,
                got: 40
            })
        );
        assert_eq!(
            Piggyback::<2>::decode(&[]),
            Err(DecodeError::Short { needed: 96, got: 0 })
        );
        let mut small = [0u8; 10];
        assert_eq!(
            sample().encode(&mut small),
            Err(EncodeError::BufferTooShort {
                needed: 96,
                got: 10
            })
        );
    }

    #[test]
    fn foreign_version_and_k_are_reported() {
        let mut buf = [0u8; Piggyback::<2>::ENCODED_LEN];
        sample().encode(&mut buf).unwrap();
        assert_eq!(
            Piggyback::<4>::decode(&buf),
            Err(DecodeError::WrongK {
                found: 2,
                expected: 4
            })
        );
        let mut v = buf;
        v[2] = 9;
        assert_eq!(
            Piggyback::<2>::decode(&v),
            Err(DecodeError::Version {
                found: 9,
                expected: 1
            })
        );
        let mut f = buf;
        f[0] = b'X';
        assert!(matches!(
            Piggyback::<2>::decode(&f),
            Err(DecodeError::Foreign { .. })
        ));
        let mut r = buf;
        r[12] = 1;
        assert!(matches!(
            Piggyback::<2>::decode(&r),
            Err(DecodeError::Foreign { .. })
        ));
    }

    #[test]
    fn empty_record_has_no_data() {
        let e = Piggyback::<3>::EMPTY;
        assert!(!e.flags.contains(Flags::DELAY));
        assert_eq!(Piggyback::<3>::ENCODED_LEN, 48 + 72);
    }
}
