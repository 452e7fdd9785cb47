//! Loom models of the live monitor's seqlock (R10: samples are read without
//! stopping the program, never a torn record): the core's writer and
//! reader (`heisen_core::monitor`) run on loom's atomics through its `Word`
//! trait, the very code the runtime and `heisen monitor` run.
//!
//! `scripts/test` runs them (stage `loom-monitor`): `RUSTFLAGS="--cfg loom"
//! LOOM_MAX_PREEMPTIONS=3 cargo test --release -p heisen-shmem --test
//! loom_monitor` in its own target directory; about 2 s after a 75 s build.
//!
//! Checked by breaking the code: without the writer's release fence after
//! the odd sequence, or without the reader's second reading of the
//! sequence, these models fail. Without the reader's first acquire fence
//! they still pass: loom does not produce the stale relaxed read that the
//! C++ model allows there (the fence stays: Boehm 2012, Fig. 6).
#![cfg(loom)]

use core::sync::atomic::Ordering;

use heisen_core::Snapshot;
use heisen_core::monitor::{Busy, Header, Layout, Reader, Sample, Word, Writer};
use loom::sync::Arc;
use loom::sync::atomic::AtomicU64;

/// A table word on loom's atomics.
struct LoomWord(AtomicU64);

impl Word for LoomWord {
    fn load(&self, order: Ordering) -> u64 {
        self.0.load(order)
    }

    fn store(&self, value: u64, order: Ordering) {
        self.0.store(value, order);
    }

    fn fetch_max(&self, value: u64, order: Ordering) -> u64 {
        self.0.fetch_max(value, order)
    }

    fn fence(order: Ordering) {
        loom::sync::atomic::fence(order);
    }
}

const K: usize = 1;

fn new_table(layout: Layout) -> Arc<Vec<LoomWord>> {
    let words: Vec<LoomWord> = (0..layout.words())
        .map(|_| LoomWord(AtomicU64::new(0)))
        .collect();
    Writer::create(&words, layout, Header { pid: 1, start: 0 }).expect("table fits");
    Arc::new(words)
}

/// Sample number `n`: every field derived from `n`, so a mix of two
/// samples is visible.
fn sample(n: i64) -> Sample<K> {
    Sample {
        time: n as u64,
        ended: n % 2 == 0,
        path: Snapshot {
            location: n as u32,
            active: true,
            longest: 100 * n,
            transfer: n,
            inclusive: [10 * n],
            exclusive: [-n],
            net: [90 * n],
        },
    }
}

#[test]
fn a_reader_never_sees_a_torn_sample() {
    loom::model(|| {
        let layout = Layout::new(K, 1);
        let words = new_table(layout);
        // A sample is there already: the race is with the next one.
        let table = Writer::attach(&words[..], layout).expect("table fits");
        table
            .claim::<K>(0)
            .expect("slot 0")
            .publish_sample(&sample(1));
        let theirs = words.clone();
        let writer = loom::thread::spawn(move || {
            let table = Writer::attach(&theirs[..], layout).expect("table fits");
            table
                .claim::<K>(0)
                .expect("slot 0")
                .publish_sample(&sample(2));
        });
        let reader = Reader::<_, K>::open(&words[..]).expect("header written before the spawn");
        match reader.sample(0) {
            Ok(Some(s)) => assert!(s == sample(1) || s == sample(2), "torn: {s:?}"),
            Ok(None) => panic!("sample 1 was published before the spawn"),
            Err(Busy) => {}
        }
        writer.join().expect("writer");
        // Once the writer is done, the latest sample is there whole.
        assert_eq!(reader.sample(0), Ok(Some(sample(2))));
    });
}

#[test]
fn a_reader_sees_nothing_or_a_whole_sample_of_another_thread() {
    loom::model(|| {
        let layout = Layout::new(K, 1);
        let words = new_table(layout);
        let theirs = words.clone();
        let writer = loom::thread::spawn(move || {
            let table = Writer::attach(&theirs[..], layout).expect("table fits");
            let slot = table.claim::<K>(0).expect("slot 0");
            slot.publish_sample(&sample(1));
            slot.publish_sample(&sample(2));
        });
        let reader = Reader::<_, K>::open(&words[..]).expect("header written before the spawn");
        // Nothing yet, busy, or a whole sample: one whose sequence this
        // thread saw comes with its values, not the zeros before them.
        if let Ok(Some(s)) = reader.sample(0) {
            assert!(s == sample(1) || s == sample(2), "torn: {s:?}");
        }
        writer.join().expect("writer");
    });
}

#[test]
fn a_reader_never_sees_a_half_written_name() {
    loom::model(|| {
        let layout = Layout::new(K, 1);
        let words = new_table(layout);
        let theirs = words.clone();
        let writer = loom::thread::spawn(move || {
            let table = Writer::attach(&theirs[..], layout).expect("table fits");
            assert!(table.set_name(0, 3, "exchange_halo"));
        });
        let reader = Reader::<_, K>::open(&words[..]).expect("header written before the spawn");
        // Not named yet, busy, or the whole name.
        if let Ok(Some(n)) = reader.name(0) {
            assert_eq!((n.id, n.as_bytes()), (3, &b"exchange_halo"[..]));
        }
        writer.join().expect("writer");
    });
}

#[test]
fn two_writers_of_two_slots_do_not_disturb_each_other() {
    loom::model(|| {
        let layout = Layout::new(K, 2);
        let words = new_table(layout);
        let spawn = |index: usize, n: i64| {
            let theirs = words.clone();
            loom::thread::spawn(move || {
                let table = Writer::attach(&theirs[..], layout).expect("table fits");
                table
                    .claim::<K>(index)
                    .expect("slot")
                    .publish_sample(&sample(n));
            })
        };
        let a = spawn(0, 3);
        let b = spawn(1, 4);
        let reader = Reader::<_, K>::open(&words[..]).expect("header");
        for (index, n) in [(0, 3), (1, 4)] {
            if let Ok(Some(s)) = reader.sample(index) {
                assert_eq!(s, sample(n));
            }
        }
        a.join().expect("a");
        b.join().expect("b");
        assert_eq!(reader.used(), 2);
    });
}
