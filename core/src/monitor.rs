//! The live monitor's shared table: where every location of a running
//! process publishes its latest `(L, s, n)` so that another process can
//! read them at any time without stopping it (R10, 003 §2.3 and App. A).
//!
//! The table is an array of 64-bit words (in a file under `/dev/shm` that
//! the runtime maps, or any `&[W]` a test makes): a header, then one slot
//! per location. Every access goes through [`Word`], an atomic 64-bit word,
//! so that both sides share this code and loom can check it on its own
//! atomics. `docs/monitor.md` draws the layout word by word.
//!
//! # Never a torn record (R10)
//!
//! Each slot, and the header's region names, is guarded by a sequence word
//! (a seqlock with one writer: the location's own thread; for the names,
//! whoever holds the runtime's name lock). The writer makes the sequence
//! odd, writes the record, and makes it even again; a reader reads the
//! sequence, the record and the sequence again, and keeps the record only
//! if both readings are the same even number. The writer never waits for
//! a reader, so reading never stops or slows the program. The fences are
//! those of Boehm's "Can seqlocks get along with programming language
//! memory models?" (2012, Fig. 6), with the reader's acquire load written
//! as a relaxed load and an acquire fence, because a reader maps the table
//! read-only and Rust allows only plain relaxed loads on read-only memory.

use core::sync::atomic::{AtomicU64, Ordering, fence};

use crate::path::Snapshot;
use crate::piggyback::{Flags as PiggybackFlags, Piggyback};

/// First word of every table: `heisenLM` in little-endian bytes. A table
/// written on a machine of the other byte order reads as a foreign magic.
pub const MAGIC: u64 = u64::from_le_bytes(*b"heisenLM");

/// Version of the layout in word [`header::VERSION`]; any change of
/// meaning or position bumps it.
pub const VERSION: u64 = 1;

/// Where a process keeps its table: `/dev/shm/heisen.<pid>.monitor`
/// (`DIRECTORY`, then `FILE_PREFIX`, the pid, `FILE_SUFFIX`): a tmpfs, so
/// the table lives in memory. Writer and reader both build the path so.
pub const DIRECTORY: &str = "/dev/shm";

/// See [`DIRECTORY`].
pub const FILE_PREFIX: &str = "heisen.";

/// See [`DIRECTORY`].
pub const FILE_SUFFIX: &str = ".monitor";

/// Longest region name the header holds, in bytes (a live view's column;
/// the report keeps up to `REGION_NAME_LEN`); longer names are cut as the
/// report cuts its own (`report::cut_name`: a prefix, `…#` and the whole
/// name's hash), so that two long names sharing a prefix stay apart.
pub const NAME_LEN: usize = 64;

/// Words of one name's bytes.
const NAME_WORDS: usize = NAME_LEN / 8;

/// Words of one selected region's entry in the header: `id | len << 32`,
/// then the name's bytes.
const NAME_ENTRY: usize = 1 + NAME_WORDS;

/// Slots start, and each slot is padded, to a multiple of this many words
/// (64 bytes, one cache line): two threads never write one line.
const LINE: usize = 8;

/// Word indices of the header.
pub mod header {
    /// [`super::MAGIC`], written last when the table is set up.
    pub const MAGIC: usize = 0;
    /// [`super::VERSION`].
    pub const VERSION: usize = 1;
    /// `K`, the number of selected regions (R7).
    pub const SELECTED: usize = 2;
    /// Number of slots.
    pub const SLOTS: usize = 3;
    /// Words per slot (the stride).
    pub const SLOT_WORDS: usize = 4;
    /// Word index of slot 0.
    pub const SLOT_OFFSET: usize = 5;
    /// Process id of the writer.
    pub const PID: usize = 6;
    /// Measured time the writer's runtime started, ns.
    pub const START: usize = 7;
    /// Sequence word of the names below (odd while one is written).
    pub const SEQUENCE: usize = 8;
    /// Slots claimed so far (a high-water mark: readers scan below it).
    pub const USED: usize = 9;
    /// First selected region's entry: `id | len << 32` (0: not named
    /// yet), then 8 words of UTF-8 bytes; `K` entries follow each other.
    pub const NAMES: usize = 10;
}

/// Word indices inside a slot.
pub mod slot {
    /// Sequence word: 0 never written, odd while being written.
    pub const SEQUENCE: usize = 0;
    /// The location's id.
    pub const LOCATION: usize = 1;
    /// [`super::Flags`].
    pub const FLAGS: usize = 2;
    /// Measured time of the location's event the values belong to, ns.
    pub const TIME: usize = 3;
    /// `L` (i64 as u64).
    pub const LONGEST: usize = 4;
    /// The part of `L` in transfers.
    pub const TRANSFER: usize = 5;
    /// `inclusive[K]`, then `exclusive[K]`, then `net[K]` (i64 as u64).
    pub const SHARES: usize = 6;
}

/// The bits of a slot's flags word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flags;

impl Flags {
    /// The location collects critical-path data (R9): the values mean
    /// something.
    pub const ACTIVE: u64 = 1;
    /// The location ended; this is its final sample.
    pub const ENDED: u64 = 2;
}

const fn round_up(words: usize) -> usize {
    words.div_ceil(LINE) * LINE
}

/// The sizes of a table with `selected` regions and `slots` slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    selected: usize,
    slots: usize,
}

impl Layout {
    /// A table for `selected` regions (`K`) and `slots` locations.
    pub const fn new(selected: usize, slots: usize) -> Layout {
        Layout { selected, slots }
    }

    /// `K`.
    pub const fn selected(&self) -> usize {
        self.selected
    }

    /// Number of slots.
    pub const fn slots(&self) -> usize {
        self.slots
    }

    /// Words of the header, padded to a cache line: the index of slot 0.
    pub const fn header_words(&self) -> usize {
        round_up(header::NAMES + self.selected * NAME_ENTRY)
    }

    /// Words of one slot, padded to a cache line.
    pub const fn slot_words(&self) -> usize {
        round_up(slot::SHARES + 3 * self.selected)
    }

    /// Words of the whole table.
    pub const fn words(&self) -> usize {
        self.header_words() + self.slots * self.slot_words()
    }

    /// Bytes of the whole table (the file's size).
    pub const fn bytes(&self) -> usize {
        self.words() * 8
    }

    fn slot<'a, W>(&self, words: &'a [W], index: usize) -> Option<&'a [W]> {
        if index >= self.slots {
            return None;
        }
        let start = self.header_words() + index * self.slot_words();
        words.get(start..start + self.slot_words())
    }

    fn name<'a, W>(&self, words: &'a [W], k: usize) -> Option<&'a [W]> {
        if k >= self.selected {
            return None;
        }
        let start = header::NAMES + k * NAME_ENTRY;
        words.get(start..start + NAME_ENTRY)
    }
}

/// A 64-bit atomic word of the table. Implemented for `AtomicU64`; a loom
/// model implements it for loom's atomics, whose fences are its own.
pub trait Word {
    /// An atomic load.
    fn load(&self, order: Ordering) -> u64;
    /// An atomic store.
    fn store(&self, value: u64, order: Ordering);
    /// An atomic maximum (writers only).
    fn fetch_max(&self, value: u64, order: Ordering) -> u64;
    /// A fence of the same memory model as these atomics.
    fn fence(order: Ordering);
}

impl Word for AtomicU64 {
    #[inline]
    fn load(&self, order: Ordering) -> u64 {
        AtomicU64::load(self, order)
    }

    #[inline]
    fn store(&self, value: u64, order: Ordering) {
        AtomicU64::store(self, value, order);
    }

    #[inline]
    fn fetch_max(&self, value: u64, order: Ordering) -> u64 {
        AtomicU64::fetch_max(self, value, order)
    }

    #[inline]
    fn fence(order: Ordering) {
        fence(order);
    }
}

/// Why a table cannot be set up or read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableError {
    /// The words are fewer than the layout needs.
    Short {
        /// Words there are.
        words: usize,
        /// Words the layout needs.
        needed: usize,
    },
    /// The header is not written yet (the writer is still setting up).
    NotReady,
    /// The first word is not [`MAGIC`]: not a heisen monitor table, or
    /// one written on a machine of the other byte order.
    Foreign {
        /// The word found.
        found: u64,
    },
    /// A layout version this code does not read.
    UnsupportedVersion(u64),
    /// More selected regions than the reader holds.
    TooManySelected {
        /// `K` of the table.
        found: u64,
        /// Most the reader holds.
        max: usize,
    },
    /// The header's slot stride or offset disagree with its `K`.
    Inconsistent,
}

impl core::fmt::Display for TableError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            TableError::Short { words, needed } => write!(
                f,
                "the table has {} bytes; its header says {} (truncated file?)",
                words * 8,
                needed * 8
            ),
            TableError::NotReady => f.write_str("the table's header is not written yet"),
            TableError::Foreign { found } => write!(
                f,
                "not a heisen monitor table (first word {found:#018x}, expected {MAGIC:#018x})"
            ),
            TableError::UnsupportedVersion(v) => {
                write!(f, "monitor table version {v}, this reader knows {VERSION}")
            }
            TableError::TooManySelected { found, max } => write!(
                f,
                "the table keeps {found} selected regions, this reader at most {max}"
            ),
            TableError::Inconsistent => {
                f.write_str("the table's header is inconsistent (slot size or offset)")
            }
        }
    }
}

impl core::error::Error for TableError {}

/// A record was being written while it was read: read it again. A reader
/// that gives up keeps the previous sample; the writer is never held up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Busy;

impl core::fmt::Display for Busy {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("the record was being written")
    }
}

impl core::error::Error for Busy {}

/// What the header says about the writer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Process id of the writer.
    pub pid: u64,
    /// Measured time its runtime started, ns.
    pub start: u64,
}

/// One location's published state: its `(L, s, n)` at one of its events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample<const K: usize> {
    /// Measured time of that event, ns (same clock as the report's times).
    pub time: u64,
    /// Whether the location ended: this is its final sample.
    pub ended: bool,
    /// The values; `path.active` is false while the location collects no
    /// critical-path data (R9).
    pub path: Snapshot<K>,
}

// ----- writing ------------------------------------------------------------

/// The writer's side of a table: sets up the header and names the
/// selected regions. Slots are written through [`SlotWriter`]s.
#[derive(Debug)]
pub struct Writer<'a, W> {
    words: &'a [W],
    layout: Layout,
}

impl<'a, W: Word> Writer<'a, W> {
    /// Sets up a table over `words`, which must be zero (a new file) or a
    /// table this writer set up before, and no reader may hold it as
    /// ready yet: the magic is written last.
    pub fn create(words: &'a [W], layout: Layout, header: Header) -> Result<Self, TableError> {
        if words.len() < layout.words() {
            return Err(TableError::Short {
                words: words.len(),
                needed: layout.words(),
            });
        }
        let store = |i: usize, v: u64| words[i].store(v, Ordering::Relaxed);
        store(header::VERSION, VERSION);
        store(header::SELECTED, layout.selected as u64);
        store(header::SLOTS, layout.slots as u64);
        store(header::SLOT_WORDS, layout.slot_words() as u64);
        store(header::SLOT_OFFSET, layout.header_words() as u64);
        store(header::PID, header.pid);
        store(header::START, header.start);
        // A reader that sees the magic sees the words above (it reads the
        // magic, then fences with acquire).
        words[header::MAGIC].store(MAGIC, Ordering::Release);
        Ok(Writer { words, layout })
    }

    /// The writer of a table that [`Writer::create`] set up over `words`
    /// before (another handle to it: the names and slots are written
    /// later, from wherever the writer is).
    pub fn attach(words: &'a [W], layout: Layout) -> Result<Self, TableError> {
        if words.len() < layout.words() {
            return Err(TableError::Short {
                words: words.len(),
                needed: layout.words(),
            });
        }
        Ok(Writer { words, layout })
    }

    /// The table's layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Names selected region `k` (share index, R7): region `id` called
    /// `name`, cut to [`NAME_LEN`] bytes (`report::cut_name`). Callers
    /// serialise calls (one writer of the names at a time); readers may
    /// read meanwhile. Returns false if `k` is not below `K`.
    pub fn set_name(&self, k: usize, id: u32, name: &str) -> bool {
        let Some(entry) = self.layout.name(self.words, k) else {
            return false;
        };
        let name = crate::report::cut_name::<NAME_LEN>(name);
        let (bytes, end) = (name.as_bytes(), name.len());
        let sequence = &self.words[header::SEQUENCE];
        let s = sequence.load(Ordering::Relaxed);
        begin_write(sequence, s);
        entry[0].store(u64::from(id) | (end as u64) << 32, Ordering::Relaxed);
        for (w, word) in entry[1..].iter().enumerate() {
            let mut chunk = [0u8; 8];
            let from = (w * 8).min(bytes.len());
            let to = (w * 8 + 8).min(bytes.len());
            chunk[..to - from].copy_from_slice(&bytes[from..to]);
            word.store(u64::from_le_bytes(chunk), Ordering::Relaxed);
        }
        sequence.store(s.wrapping_add(2), Ordering::Release);
        true
    }

    /// The writer of slot `index`, which its location's thread alone uses
    /// from now on; counts the slot as used. `None` beyond the last slot.
    pub fn claim<const K: usize>(&self, index: usize) -> Option<SlotWriter<'a, W, K>> {
        if K != self.layout.selected {
            return None;
        }
        let words = self.layout.slot(self.words, index)?;
        self.words[header::USED].fetch_max(index as u64 + 1, Ordering::Relaxed);
        SlotWriter::new(words)
    }
}

/// The odd half of a seqlock write: the sequence becomes odd before any
/// word of the record changes (Boehm 2012, Fig. 6: relaxed store, then a
/// release fence that orders it before the record's stores).
#[inline]
fn begin_write<W: Word>(sequence: &W, s: u64) {
    sequence.store(s.wrapping_add(1), Ordering::Relaxed);
    W::fence(Ordering::Release);
}

/// Writes one slot. One writer per slot: the location's own thread.
#[derive(Debug)]
pub struct SlotWriter<'a, W, const K: usize> {
    words: &'a [W],
}

impl<W, const K: usize> Clone for SlotWriter<'_, W, K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<W, const K: usize> Copy for SlotWriter<'_, W, K> {}

impl<'a, W: Word, const K: usize> SlotWriter<'a, W, K> {
    /// A writer over exactly one slot's words (at least
    /// `Layout::new(K, 1).slot_words()`), e.g. a private scratch slot that
    /// no reader sees; `None` if `words` is too short.
    pub fn new(words: &'a [W]) -> Option<Self> {
        (words.len() >= Layout::new(K, 1).slot_words()).then_some(SlotWriter { words })
    }

    /// Publishes `path`, the location's values at its event at measured
    /// time `time` (R10); `ended` marks its final sample. Never waits.
    #[inline]
    pub fn publish(&self, time: u64, ended: bool, path: &Snapshot<K>) {
        self.write(
            time,
            ended,
            Values {
                location: path.location,
                active: path.active,
                longest: path.longest,
                transfer: path.transfer,
                inclusive: &path.inclusive,
                exclusive: &path.exclusive,
                net: &path.net,
            },
        );
    }

    /// Publishes a whole [`Sample`] (for tests and tools that make them).
    pub fn publish_sample(&self, sample: &Sample<K>) {
        self.publish(sample.time, sample.ended, &sample.path);
    }

    /// Publishes the values a release just put in its record (R3): the
    /// same `(L, s, n)` as the location's snapshot after the release, with
    /// no second materialisation. A record without path data (R9) is
    /// published as an inactive sample.
    #[inline]
    pub fn publish_record(&self, time: u64, ended: bool, record: &Piggyback<K>) {
        self.write(
            time,
            ended,
            Values {
                location: record.location,
                active: record.flags.contains(PiggybackFlags::PATH),
                longest: record.longest,
                transfer: record.transfer,
                inclusive: &record.inclusive,
                exclusive: &record.exclusive,
                net: &record.net,
            },
        );
    }

    /// The seqlock write of one record.
    #[inline]
    fn write(&self, time: u64, ended: bool, v: Values<'_, K>) {
        let Some((sequence, record)) = self.words.split_first() else {
            return; // cannot happen: `new` checked the length
        };
        let s = sequence.load(Ordering::Relaxed);
        begin_write(sequence, s);
        let mut flags = 0;
        if v.active {
            flags |= Flags::ACTIVE;
        }
        if ended {
            flags |= Flags::ENDED;
        }
        // Word `slot::X` is `record[X - 1]`: the sequence is split off.
        let head = [
            u64::from(v.location),
            flags,
            time,
            v.longest as u64,
            v.transfer as u64,
        ];
        for (word, value) in record.iter().zip(head) {
            word.store(value, Ordering::Relaxed);
        }
        if let Some(shares) = record.get(slot::SHARES - 1..slot::SHARES - 1 + 3 * K) {
            let (inclusive, rest) = shares.split_at(K);
            let (exclusive, net) = rest.split_at(K);
            for (words, values) in [
                (inclusive, v.inclusive),
                (exclusive, v.exclusive),
                (net, v.net),
            ] {
                for (word, &value) in words.iter().zip(values) {
                    word.store(value as u64, Ordering::Relaxed);
                }
            }
        }
        // The even value releases the record: a reader that sees it sees
        // every store above.
        sequence.store(s.wrapping_add(2), Ordering::Release);
    }
}

/// The values of one record, borrowed from a snapshot or a piggyback.
#[derive(Clone, Copy)]
struct Values<'v, const K: usize> {
    location: u32,
    active: bool,
    longest: i64,
    transfer: i64,
    inclusive: &'v [i64; K],
    exclusive: &'v [i64; K],
    net: &'v [i64; K],
}

// ----- reading ------------------------------------------------------------

/// A selected region's label as read from the header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Name {
    /// The region's id (the report's region id).
    pub id: u32,
    /// The name's bytes (UTF-8 from a heisen writer).
    pub bytes: [u8; NAME_LEN],
    /// How many of `bytes` are the name.
    pub len: usize,
}

impl Name {
    /// The name's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// The reader's side of a table, for readers holding up to `K` selected
/// regions (at least the table's).
#[derive(Debug)]
pub struct Reader<'a, W, const K: usize> {
    words: &'a [W],
    layout: Layout,
    header: Header,
}

impl<'a, W: Word, const K: usize> Reader<'a, W, K> {
    /// Reads and checks the header.
    pub fn open(words: &'a [W]) -> Result<Self, TableError> {
        let load = |i: usize| words.get(i).map(|w| w.load(Ordering::Relaxed));
        let needed = header::NAMES;
        let magic = load(header::MAGIC).ok_or(TableError::Short {
            words: words.len(),
            needed,
        })?;
        if magic == 0 {
            return Err(TableError::NotReady);
        }
        if magic != MAGIC {
            return Err(TableError::Foreign { found: magic });
        }
        W::fence(Ordering::Acquire); // pairs with the magic's release store
        let field = |i: usize| {
            load(i).ok_or(TableError::Short {
                words: words.len(),
                needed,
            })
        };
        let version = field(header::VERSION)?;
        if version != VERSION {
            return Err(TableError::UnsupportedVersion(version));
        }
        let selected = field(header::SELECTED)?;
        if selected > K as u64 {
            return Err(TableError::TooManySelected {
                found: selected,
                max: K,
            });
        }
        let slots = usize::try_from(field(header::SLOTS)?).map_err(|_| TableError::Inconsistent)?;
        let layout = Layout::new(selected as usize, slots);
        if field(header::SLOT_WORDS)? != layout.slot_words() as u64
            || field(header::SLOT_OFFSET)? != layout.header_words() as u64
            || layout.slots.checked_mul(layout.slot_words()).is_none()
        {
            return Err(TableError::Inconsistent);
        }
        if words.len() < layout.words() {
            return Err(TableError::Short {
                words: words.len(),
                needed: layout.words(),
            });
        }
        let header = Header {
            pid: field(header::PID)?,
            start: field(header::START)?,
        };
        Ok(Reader {
            words,
            layout,
            header,
        })
    }

    /// The table's layout (its own `K`, at most the reader's).
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// What the header says about the writer.
    pub fn header(&self) -> Header {
        self.header
    }

    /// Slots claimed so far; slots at and beyond it are empty.
    pub fn used(&self) -> usize {
        let used = self.words[header::USED].load(Ordering::Relaxed);
        usize::try_from(used).map_or(self.layout.slots, |u| u.min(self.layout.slots))
    }

    /// The names' sequence word: it changes whenever a name is added, so
    /// a reader reads the names again only when it did.
    pub fn names_version(&self) -> u64 {
        self.words[header::SEQUENCE].load(Ordering::Relaxed)
    }

    /// Selected region `k`'s name: `Ok(None)` while not named yet (or `k`
    /// beyond the table's `K`), `Err(Busy)` if it was being written.
    pub fn name(&self, k: usize) -> Result<Option<Name>, Busy> {
        let Some(entry) = self.layout.name(self.words, k) else {
            return Ok(None);
        };
        let sequence = &self.words[header::SEQUENCE];
        let s1 = begin_read(sequence)?;
        let first = entry[0].load(Ordering::Relaxed);
        let mut bytes = [0u8; NAME_LEN];
        for (w, word) in entry[1..].iter().enumerate() {
            bytes[w * 8..w * 8 + 8].copy_from_slice(&word.load(Ordering::Relaxed).to_le_bytes());
        }
        end_read(sequence, s1)?;
        let len = (first >> 32) as usize;
        if len == 0 {
            return Ok(None);
        }
        Ok(Some(Name {
            id: first as u32,
            bytes,
            len: len.min(NAME_LEN),
        }))
    }

    /// The latest sample of slot `index`: `Ok(None)` if never written (or
    /// beyond the table), `Err(Busy)` if being written. Shares beyond the
    /// table's `K` are 0.
    pub fn sample(&self, index: usize) -> Result<Option<Sample<K>>, Busy> {
        let Some(w) = self.layout.slot(self.words, index) else {
            return Ok(None);
        };
        let sequence = &w[slot::SEQUENCE];
        let s1 = begin_read(sequence)?;
        if s1 == 0 {
            return Ok(None);
        }
        let load = |i: usize| w[i].load(Ordering::Relaxed);
        let flags = load(slot::FLAGS);
        let mut path = Snapshot::<K> {
            location: load(slot::LOCATION) as u32,
            active: flags & Flags::ACTIVE != 0,
            longest: load(slot::LONGEST) as i64,
            transfer: load(slot::TRANSFER) as i64,
            ..Snapshot::ZERO
        };
        let time = load(slot::TIME);
        let k_table = self.layout.selected;
        for k in 0..k_table {
            path.inclusive[k] = load(slot::SHARES + k) as i64;
            path.exclusive[k] = load(slot::SHARES + k_table + k) as i64;
            path.net[k] = load(slot::SHARES + 2 * k_table + k) as i64;
        }
        end_read(sequence, s1)?;
        Ok(Some(Sample {
            time,
            ended: flags & Flags::ENDED != 0,
            path,
        }))
    }

    /// [`Reader::sample`], tried up to `tries` times (at least once).
    pub fn sample_retrying(&self, index: usize, tries: usize) -> Result<Option<Sample<K>>, Busy> {
        let mut result = self.sample(index);
        for _ in 1..tries {
            if result.is_ok() {
                break;
            }
            core::hint::spin_loop();
            result = self.sample(index);
        }
        result
    }
}

/// The first half of a seqlock read: an even sequence, and the record's
/// stores that it released visible (a relaxed load and an acquire fence:
/// an acquire load is not allowed on read-only memory).
#[inline]
fn begin_read<W: Word>(sequence: &W) -> Result<u64, Busy> {
    let s = sequence.load(Ordering::Relaxed);
    W::fence(Ordering::Acquire);
    if s & 1 == 1 { Err(Busy) } else { Ok(s) }
}

/// The second half: the record's loads ordered before a second reading of
/// the sequence, which must not have moved (Boehm 2012, Fig. 6).
#[inline]
fn end_read<W: Word>(sequence: &W, s1: u64) -> Result<(), Busy> {
    W::fence(Ordering::Acquire);
    if sequence.load(Ordering::Relaxed) == s1 {
        Ok(())
    } else {
        Err(Busy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: usize = 2;

    fn table(layout: Layout) -> [AtomicU64; 256] {
        assert!(layout.words() <= 256);
        [const { AtomicU64::new(0) }; 256]
    }

    fn sample(n: i64, ended: bool) -> Sample<K> {
        Sample {
            time: 1_000 + n as u64,
            ended,
            path: Snapshot {
                location: 7,
                active: true,
                longest: 100 * n,
                transfer: n,
                inclusive: [10 * n, 20 * n],
                exclusive: [5 * n, -3],
                net: [90 * n, 80 * n],
            },
        }
    }

    #[test]
    fn layout_pads_header_and_slots_to_cache_lines() {
        let l = Layout::new(8, 512);
        assert_eq!(l.header_words(), 88, "10 + 8 * 9 = 82, padded");
        assert_eq!(l.slot_words(), 32, "6 + 3 * 8 = 30, padded");
        assert_eq!(l.words(), 88 + 512 * 32);
        assert_eq!(l.bytes() % 64, 0);
        let empty = Layout::new(0, 1);
        assert_eq!((empty.header_words(), empty.slot_words()), (16, 8));
    }

    #[test]
    fn header_round_trip_and_names() {
        let layout = Layout::new(K, 3);
        let words = table(layout);
        let writer = Writer::create(
            &words,
            layout,
            Header {
                pid: 4242,
                start: 99,
            },
        )
        .unwrap();
        let reader = Reader::<_, 4>::open(&words).unwrap();
        assert_eq!(reader.layout(), layout);
        assert_eq!(
            reader.header(),
            Header {
                pid: 4242,
                start: 99
            }
        );
        assert_eq!(reader.name(0), Ok(None), "not named yet");
        let before = reader.names_version();
        assert!(writer.set_name(1, 5, "exchange_halo"));
        assert_ne!(reader.names_version(), before);
        let name = reader.name(1).unwrap().unwrap();
        assert_eq!((name.id, name.as_bytes()), (5, &b"exchange_halo"[..]));
        assert!(!writer.set_name(K, 1, "beyond K"));
        // A long name is cut at a character boundary within 64 bytes, and
        // two long names sharing those bytes stay apart (the whole name's
        // hash ends the cut, as in the report).
        let long = "é".repeat(40); // 80 bytes
        let longer = long.clone() + "x";
        let mut seen = [[0u8; NAME_LEN]; 2];
        for (n, name) in [&long, &longer].into_iter().enumerate() {
            assert!(writer.set_name(0, 0, name));
            let read = reader.name(0).unwrap().unwrap();
            let text = core::str::from_utf8(read.as_bytes()).unwrap();
            assert!(read.len <= NAME_LEN, "{text}");
            assert!(
                text.starts_with(&long[..40]) && text.contains("…#"),
                "{text}"
            );
            assert_eq!(text, crate::report::cut_name::<NAME_LEN>(name).as_str());
            seen[n][..read.len].copy_from_slice(read.as_bytes());
        }
        assert_ne!(seen[0], seen[1], "two names sharing 80 bytes");
    }

    #[test]
    fn sample_round_trip_with_negative_values() {
        let layout = Layout::new(K, 3);
        let words = table(layout);
        let writer = Writer::create(&words, layout, Header { pid: 1, start: 0 }).unwrap();
        let slot = writer.claim::<K>(2).unwrap();
        let reader = Reader::<_, K>::open(&words).unwrap();
        assert_eq!(reader.used(), 3);
        assert_eq!(reader.sample(2), Ok(None), "claimed, never written");
        assert_eq!(reader.sample(0), Ok(None));
        let mut s = sample(3, false);
        s.path.longest = -12; // over-compensated values keep their sign
        slot.publish_sample(&s);
        assert_eq!(reader.sample(2), Ok(Some(s)));
        slot.publish_sample(&sample(4, true));
        assert_eq!(reader.sample(2), Ok(Some(sample(4, true))));
        assert_eq!(reader.sample(3), Ok(None), "beyond the table");
        assert!(writer.claim::<K>(3).is_none());
        assert!(writer.claim::<1>(0).is_none(), "another K");
    }

    #[test]
    fn a_wider_reader_gets_zero_beyond_the_tables_k() {
        let layout = Layout::new(K, 1);
        let words = table(layout);
        let writer = Writer::create(&words, layout, Header { pid: 1, start: 0 }).unwrap();
        writer
            .claim::<K>(0)
            .unwrap()
            .publish_sample(&sample(2, false));
        let s = Reader::<_, 5>::open(&words)
            .unwrap()
            .sample(0)
            .unwrap()
            .unwrap();
        assert_eq!(s.path.inclusive, [20, 40, 0, 0, 0]);
        assert_eq!(s.path.net, [180, 160, 0, 0, 0]);
    }

    #[test]
    fn torn_reads_are_detected() {
        let layout = Layout::new(K, 1);
        let words = table(layout);
        let writer = Writer::create(&words, layout, Header { pid: 1, start: 0 }).unwrap();
        writer
            .claim::<K>(0)
            .unwrap()
            .publish_sample(&sample(1, false));
        let reader = Reader::<_, K>::open(&words).unwrap();
        let at = layout.header_words();
        // A writer stopped in the middle: odd sequence.
        let s = words[at].load(Ordering::Relaxed);
        words[at].store(s + 1, Ordering::Relaxed);
        assert_eq!(reader.sample(0), Err(Busy));
        assert_eq!(reader.sample_retrying(0, 10), Err(Busy));
        // A write that completed between the two readings of the sequence
        // (simulated: the record read, then the sequence moved on).
        words[at].store(s + 2, Ordering::Relaxed);
        assert!(end_read(&words[at], s).is_err());
        assert_eq!(reader.sample(0).map(|s| s.is_some()), Ok(true));
        // Names too.
        words[header::SEQUENCE].store(1, Ordering::Relaxed);
        assert_eq!(reader.name(0), Err(Busy));
    }

    #[test]
    fn bad_tables_are_refused_with_the_reason() {
        let layout = Layout::new(K, 2);
        let words = table(layout);
        assert_eq!(
            Reader::<_, K>::open(&words).unwrap_err(),
            TableError::NotReady
        );
        assert!(matches!(
            Writer::create(&words[..10], layout, Header { pid: 1, start: 0 }),
            Err(TableError::Short { words: 10, .. })
        ));
        Writer::create(&words, layout, Header { pid: 1, start: 0 }).unwrap();
        assert_eq!(
            Reader::<_, 1>::open(&words).unwrap_err(),
            TableError::TooManySelected { found: 2, max: 1 }
        );
        assert!(matches!(
            Reader::<_, K>::open(&words[..layout.words() - 1]),
            Err(TableError::Short { .. })
        ));
        words[header::SLOT_WORDS].store(3, Ordering::Relaxed);
        assert_eq!(
            Reader::<_, K>::open(&words).unwrap_err(),
            TableError::Inconsistent
        );
        words[header::VERSION].store(9, Ordering::Relaxed);
        assert_eq!(
            Reader::<_, K>::open(&words).unwrap_err(),
            TableError::UnsupportedVersion(9)
        );
        words[header::MAGIC].store(MAGIC.swap_bytes(), Ordering::Relaxed);
        assert!(matches!(
            Reader::<_, K>::open(&words),
            Err(TableError::Foreign { .. })
        ));
        assert!(Reader::<_, K>::open(&words[..0]).is_err());
    }

    #[test]
    fn the_global_value_is_the_combination_of_the_latest_samples() {
        // R10, 003 Fig. 3: max L with its shares, max net per region.
        let layout = Layout::new(K, 2);
        let words = table(layout);
        let writer = Writer::create(&words, layout, Header { pid: 1, start: 0 }).unwrap();
        let mut a = sample(2, false);
        a.path.location = 0;
        let mut b = sample(1, true);
        b.path.location = 1;
        b.path.net = [500, 0];
        writer.claim::<K>(0).unwrap().publish_sample(&a);
        writer.claim::<K>(1).unwrap().publish_sample(&b);
        let reader = Reader::<_, K>::open(&words).unwrap();
        let global = (0..reader.used())
            .filter_map(|i| reader.sample(i).ok().flatten())
            .fold(Snapshot::ZERO, |g, s| g.combine(&s.path));
        assert_eq!((global.location, global.longest), (0, 200));
        assert_eq!(global.inclusive, a.path.inclusive);
        assert_eq!(global.net, [500, 160]);
    }
}
