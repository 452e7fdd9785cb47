//! Property tests of the kernel against plain references written in this
//! file (DESIGN.md §4; STYLE.md, "Property tests").
//!
//! What the properties prove:
//!
//! 1. The piggyback wire encoding (R3) round-trips for K = 0, 1, 4 and 32,
//!    every truncation of a record is a `Short` error, and no byte string
//!    makes `decode` panic or accept bytes that do not re-encode to
//!    themselves.
//! 2. A merge (R4, R5, R7) gives the same result whatever the order in which
//!    its dependencies are presented, and the n-to-n exchange record of R6
//!    folds associatively and commutatively.
//! 3. The delay-only form (R4) is the timestamped form (R5) with every
//!    transfer at its upper bound, so it is never earlier.
//! 4. The main oracle of DESIGN.md §4. Random deadlock-free executions of
//!    2-6 locations (computation, nested and recursive regions, messages,
//!    barriers, locks) run twice: without instrumentation cost (the truth)
//!    and with a cost per kernel action (the measured run), with one kernel
//!    per location driven online. In the timestamped form with exact
//!    calibration the kernel reproduces every true time, every true wait,
//!    and the longest path of the true run's activity graph with its
//!    shares, transfer share and nets. In the delay-only form it finds
//!    Hollingsworth's path (transfers count zero), on the truth and on the
//!    measured run alike; with costs its times are never earlier than the
//!    truth, and exact when every merge really waited.
//!
//! Every property runs from a fixed ChaCha seed. `HEISEN_PROPTEST_CASES`
//! sets the number of cases of every property; without it each uses the
//! default written beside it.

use heisen_core::merge::{self, Dependency, Form};
use heisen_core::piggyback::{MAGIC, VERSION};
use heisen_core::{
    Calibration, Config, Cost, DecodeError, EncodeError, Exchange, Flags, KernelError, Location,
    Merged, PathState, Pending, Piggyback, Snapshot,
};
use proptest::array::uniform;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{select, subsequence};
use proptest::test_runner::{
    Config as ProptestConfig, RngAlgorithm, TestCaseError, TestRng, TestRunner,
};

// ===========================================================================
// Harness
// ===========================================================================

/// Environment variable that sets the number of cases of every property.
const CASES_VAR: &str = "HEISEN_PROPTEST_CASES";

/// Runs `test` on values of `strategy` drawn from a ChaCha generator seeded
/// with `name`, so that every run sees the same cases.
fn check<S: Strategy>(
    name: &str,
    default_cases: u32,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) {
    let cases = match std::env::var(CASES_VAR) {
        Ok(value) => value
            .parse()
            .unwrap_or_else(|_| panic!("{CASES_VAR}={value:?} is not a number of cases")),
        Err(_) => default_cases,
    };
    let config = ProptestConfig {
        cases,
        rng_algorithm: RngAlgorithm::ChaCha,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut seed = [0u8; 32];
    for (byte, name_byte) in seed.iter_mut().zip(name.bytes()) {
        *byte = name_byte;
    }
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed);
    let mut runner = TestRunner::new_with_rng(config, rng);
    if let Err(error) = runner.run(&strategy, test) {
        panic!("{name}: {error}");
    }
}

/// The kernel as the tests instantiate it: `K` selected regions, a region
/// stack deeper than any generated program.
type Kernel<const K: usize> = Location<K, 16>;

/// Region ids the generators enter.
const REGIONS: [u32; 4] = [1, 2, 3, 4];
/// A region id that can be selected but is never entered.
const NEVER_ENTERED: u32 = 9;
/// Deepest region nesting a generator produces (below the stack capacity).
const MAX_DEPTH: usize = 8;

/// `K` distinct selected region ids in random order, sometimes including
/// one that the program never enters.
fn selected<const K: usize>() -> impl Strategy<Value = [u32; K]> {
    let mut ids = REGIONS.to_vec();
    ids.push(NEVER_ENTERED);
    subsequence(ids, K)
        .prop_shuffle()
        .prop_map(|ids| ids.try_into().expect("subsequence has K elements"))
}

fn flags() -> impl Strategy<Value = Flags> {
    (0..=Flags::ALL.0).prop_map(Flags)
}

/// A calibrated cost with `whole` in `range` and `inside <= whole`.
fn cost(range: core::ops::Range<u64>) -> impl Strategy<Value = Cost> {
    range.prop_flat_map(|whole| (0..=whole).prop_map(move |inside| Cost { whole, inside }))
}

/// Instrumentation costs with every action's whole cost in `range`.
fn calibration(range: core::ops::Range<u64>) -> impl Strategy<Value = Calibration> {
    (
        cost(range.clone()),
        cost(range.clone()),
        range.clone(),
        range,
    )
        .prop_map(|(enter, exit, send, merge)| Calibration {
            enter,
            exit,
            send,
            merge,
            sample: 0,
        })
}

// ===========================================================================
// Fixtures: piggybacks
// ===========================================================================

fn piggyback<const K: usize>() -> impl Strategy<Value = Piggyback<K>> {
    (
        flags(),
        any::<u32>(),
        any::<u64>(),
        any::<i64>(),
        any::<i64>(),
        any::<i64>(),
        vec(any::<i64>(), 3 * K),
    )
        .prop_map(
            |(flags, location, delay, approximated, longest, transfer, shares)| {
                let mut record = Piggyback::<K> {
                    flags,
                    location,
                    delay,
                    approximated,
                    longest,
                    transfer,
                    ..Piggyback::EMPTY
                };
                record.inclusive.copy_from_slice(&shares[..K]);
                record.exclusive.copy_from_slice(&shares[K..2 * K]);
                record.net.copy_from_slice(&shares[2 * K..]);
                record
            },
        )
}

/// How a garbage buffer is made to look like a record before decoding.
#[derive(Clone, Copy, Debug)]
enum Disguise {
    /// Random bytes as they are.
    None,
    /// The magic only.
    Magic,
    /// Magic, version and the reader's K; flags and reserved bits random.
    Header,
    /// A header that passes every check, random payload.
    Valid,
}

fn disguise() -> impl Strategy<Value = Disguise> {
    prop_oneof![
        Just(Disguise::None),
        Just(Disguise::Magic),
        Just(Disguise::Header),
        Just(Disguise::Valid),
    ]
}

fn disguised<const K: usize>(bytes: &[u8], disguise: Disguise) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let header: &[u8] = &[MAGIC[0], MAGIC[1], VERSION, K as u8];
    let keep = match disguise {
        Disguise::None => 0,
        Disguise::Magic => 2,
        Disguise::Header | Disguise::Valid => 4,
    };
    for (byte, &h) in out.iter_mut().zip(&header[..keep]) {
        *byte = h;
    }
    if let Disguise::Valid = disguise {
        if let Some(flags) = out.get_mut(4..8) {
            flags[0] &= Flags::ALL.0 as u8;
            flags[1..].fill(0);
        }
        if let Some(reserved) = out.get_mut(12..16) {
            reserved.fill(0);
        }
    }
    out
}

/// Round trip, truncations and short output buffers of one record.
fn check_encoding<const K: usize>(record: &Piggyback<K>) -> Result<(), TestCaseError> {
    let len = Piggyback::<K>::ENCODED_LEN;
    prop_assert_eq!(len, 48 + 24 * K);
    let mut buffer = vec![0u8; len + 5];
    prop_assert_eq!(record.encode(&mut buffer), Ok(len));
    prop_assert_eq!(Piggyback::<K>::decode(&buffer[..len]), Ok(*record));
    // Bytes past the record are ignored.
    prop_assert_eq!(Piggyback::<K>::decode(&buffer), Ok(*record));
    let mut scratch = vec![0u8; len];
    for got in 0..len {
        prop_assert_eq!(
            Piggyback::<K>::decode(&buffer[..got]),
            Err(DecodeError::Short { needed: len, got })
        );
        prop_assert_eq!(
            record.encode(&mut scratch[..got]),
            Err(EncodeError::BufferTooShort { needed: len, got })
        );
    }
    Ok(())
}

/// Whatever `decode` answers for `bytes`, the answer is true of the bytes.
fn check_garbage<const K: usize>(bytes: &[u8]) -> Result<(), TestCaseError> {
    let len = Piggyback::<K>::ENCODED_LEN;
    let word = |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    match Piggyback::<K>::decode(bytes) {
        Ok(record) => {
            prop_assert!(bytes.len() >= len);
            let mut again = vec![0u8; len];
            prop_assert_eq!(record.encode(&mut again), Ok(len));
            prop_assert_eq!(&again[..], &bytes[..len]);
        }
        Err(DecodeError::Short { needed, got }) => {
            prop_assert_eq!((needed, got), (len, bytes.len()));
            prop_assert!(got < needed);
        }
        Err(DecodeError::Foreign { found }) => {
            prop_assert_eq!(&found[..], &bytes[..2]);
            prop_assert!(
                found != MAGIC
                    || (bytes.len() >= len && (word(4) & !Flags::ALL.0 != 0 || word(12) != 0))
            );
        }
        Err(DecodeError::Version { found, expected }) => {
            prop_assert_eq!(&bytes[..2], &MAGIC[..]);
            prop_assert_eq!((found, expected), (bytes[2], VERSION));
            prop_assert_ne!(found, VERSION);
        }
        Err(DecodeError::WrongK { found, expected }) => {
            prop_assert_eq!(&bytes[..3], &[MAGIC[0], MAGIC[1], VERSION][..]);
            prop_assert_eq!((found, expected), (bytes[3], K));
            prop_assert_ne!(usize::from(found), K);
        }
    }
    Ok(())
}

// ===========================================================================
// Fixtures: one location's random history, and dependencies of a merge
// ===========================================================================

/// Number of selected regions in the single-location properties.
const K2: usize = 2;

/// A dependency of a merge, relative to the merge and to the merging
/// location's own path so that ties are frequent.
#[derive(Clone, Copy, Debug)]
struct DepSpec {
    flags: Flags,
    location: u32,
    delay: u64,
    /// The dependency was released this long before the merge's end.
    before_end: u64,
    /// Path length minus the merging location's own at the merge's begin.
    longest: i64,
    transfer: i64,
    inclusive: [i64; K2],
    exclusive: [i64; K2],
    /// Nets minus the merging location's own.
    net: [i64; K2],
    model: u64,
    copy: u64,
}

fn dep_spec() -> impl Strategy<Value = DepSpec> {
    (
        flags(),
        0u32..6,
        0u64..60,
        0u64..80,
        -3i64..=3,
        0i64..3,
        uniform(0i64..3),
        uniform(0i64..3),
        uniform(-3i64..=3),
        0u64..40,
        0u64..10,
    )
        .prop_map(
            |(
                flags,
                location,
                delay,
                before_end,
                longest,
                transfer,
                inclusive,
                exclusive,
                net,
                model,
                copy,
            )| {
                DepSpec {
                    flags,
                    location,
                    delay,
                    before_end,
                    longest,
                    transfer,
                    inclusive,
                    exclusive,
                    net,
                    model,
                    copy,
                }
            },
        )
}

impl DepSpec {
    /// The record, consistent with a merge ending at `end`: released at
    /// `t_j <= end` with `x_j <= t_j`; path values relative to `base`, the
    /// merging location's own record at the merge's begin.
    fn piggyback(&self, end: u64, base: &Piggyback<K2>) -> Piggyback<K2> {
        let release = end.saturating_sub(self.before_end);
        let delay = self.delay.min(release);
        Piggyback {
            flags: self.flags,
            location: self.location,
            delay,
            approximated: release as i64 - delay as i64,
            longest: base.longest + self.longest,
            transfer: self.transfer,
            inclusive: self.inclusive,
            exclusive: self.exclusive,
            net: [base.net[0] + self.net[0], base.net[1] + self.net[1]],
        }
    }
}

/// One action of a single location's random history.
#[derive(Clone, Debug)]
enum Action {
    Compute(u64),
    Enter(u32),
    Exit,
    Release,
    Merge { wait: u64, deps: Vec<DepSpec> },
    Collective { wait: u64, others: Vec<DepSpec> },
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        2 => (0u64..30).prop_map(Action::Compute),
        2 => select(REGIONS.to_vec()).prop_map(Action::Enter),
        2 => Just(Action::Exit),
        1 => Just(Action::Release),
        2 => (0u64..30, vec(dep_spec(), 0..=3))
            .prop_map(|(wait, deps)| Action::Merge { wait, deps }),
        1 => (0u64..30, vec(dep_spec(), 0..=3))
            .prop_map(|(wait, others)| Action::Collective { wait, others }),
    ]
}

/// How a single location is set up.
#[derive(Clone, Copy, Debug)]
struct LocationSpec {
    id: u32,
    form: Form,
    costs: Calibration,
    selected: [u32; K2],
    path: PathState,
}

fn location_spec() -> impl Strategy<Value = LocationSpec> {
    (
        0u32..6,
        prop_oneof![Just(Form::DelayOnly), Just(Form::Timestamped)],
        calibration(0..20),
        selected::<K2>(),
        prop_oneof![
            4 => Just(PathState::Active),
            1 => Just(PathState::Idle),
            1 => Just(PathState::Stopped),
        ],
    )
        .prop_map(|(id, form, costs, selected, path)| LocationSpec {
            id,
            form,
            costs,
            selected,
            path,
        })
}

impl LocationSpec {
    fn kernel(&self, form: Form) -> Kernel<K2> {
        let config = Config::new(self.id, self.selected)
            .form(form)
            .calibration(self.costs)
            .path(self.path);
        Location::new(config, 0)
    }
}

/// A kernel call with every argument fixed, so that two kernels can be
/// given exactly the same one.
#[derive(Clone, Debug)]
enum Call {
    Enter {
        region: u32,
        t: u64,
    },
    Exit {
        region: u32,
        t: u64,
    },
    Release {
        t: u64,
    },
    Merge {
        begin: u64,
        end: u64,
        deps: Vec<(Piggyback<K2>, u64, u64)>,
    },
    Collective {
        begin: u64,
        end: u64,
        others: Vec<Exchange<K2>>,
    },
}

/// Measured clock and open regions of a history being replayed.
#[derive(Debug, Default)]
struct Replay {
    clock: u64,
    stack: Vec<u32>,
}

impl Replay {
    /// The call `action` makes now, given the location's record at this
    /// point (`base`); `None` for pure computation and impossible exits.
    fn call(&mut self, action: &Action, base: &Piggyback<K2>) -> Option<Call> {
        let t = self.clock;
        match action {
            Action::Compute(duration) => {
                self.clock += duration;
                None
            }
            Action::Enter(region) if self.stack.len() < MAX_DEPTH => {
                self.stack.push(*region);
                Some(Call::Enter { region: *region, t })
            }
            Action::Enter(_) => None,
            Action::Exit => self.stack.pop().map(|region| Call::Exit { region, t }),
            Action::Release => Some(Call::Release { t }),
            Action::Merge { wait, deps } => {
                let end = t + wait;
                self.clock = end;
                let deps = deps
                    .iter()
                    .map(|d| (d.piggyback(end, base), d.model, d.copy))
                    .collect();
                Some(Call::Merge {
                    begin: t,
                    end,
                    deps,
                })
            }
            Action::Collective { wait, others } => {
                let end = t + wait;
                self.clock = end;
                let others = others
                    .iter()
                    .map(|d| {
                        // Entered at its release point, waited until the end.
                        let record = d.piggyback(end, base);
                        Exchange::entry(&record, end - record.measured() as u64)
                    })
                    .collect();
                Some(Call::Collective {
                    begin: t,
                    end,
                    others,
                })
            }
        }
    }
}

fn dependencies(deps: &[(Piggyback<K2>, u64, u64)]) -> Vec<Dependency<'_, K2>> {
    deps.iter()
        .map(|(record, model, copy)| Dependency::message(record, *model, *copy))
        .collect()
}

/// Makes `call` on `kernel`; the outcome of a merge or collective.
fn apply(kernel: &mut Kernel<K2>, call: &Call) -> Result<Option<Merged>, KernelError> {
    match call {
        Call::Enter { region, t } => kernel.on_enter(*region, 0, *t).map(|()| None),
        Call::Exit { region, t } => kernel.on_exit(*region, *t).map(|_| None),
        Call::Release { t } => kernel.on_release(*t).map(|_| None),
        Call::Merge { begin, end, deps } => {
            kernel.on_merge(*begin, *end, &dependencies(deps)).map(Some)
        }
        Call::Collective { begin, end, others } => {
            let own = Exchange::entry(&kernel.peek(*begin), end - begin);
            let exchange = others.iter().fold(own, |all, other| all.combine(other));
            kernel.on_collective(*begin, *end, &exchange).map(Some)
        }
    }
}

/// The first `n` indices ordered by `keys`: a random permutation of `0..n`.
fn permutation(keys: &[u32], n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&j| (keys[j], j));
    order
}

// ===========================================================================
// Fixtures: random deadlock-free executions of several locations
// ===========================================================================

/// Number of locks a program uses.
const LOCKS: usize = 2;

/// One step of a program, in generation order. Every dependency points
/// backwards in this order and sends never block, so no program deadlocks
/// and every time can be computed in one pass.
#[derive(Clone, Copy, Debug)]
enum Step {
    Compute {
        location: usize,
        duration: u64,
    },
    /// Enters `region`, possibly again (recursion).
    Enter {
        location: usize,
        region: u32,
    },
    /// Exits the innermost open region.
    Exit {
        location: usize,
    },
    /// A send at the source now, its receive at the destination now.
    Message {
        source: usize,
        destination: usize,
        latency: u64,
    },
    /// Every location.
    Barrier,
    /// Acquire, compute `duration`, release; locks go in generation order.
    Lock {
        location: usize,
        lock: usize,
        duration: u64,
    },
}

#[derive(Clone, Debug)]
struct Program<const K: usize> {
    locations: usize,
    selected: [u32; K],
    steps: Vec<Step>,
    /// Synchronisation cost `S` of a barrier: all leave at `max_i b_i + S`.
    sync: u64,
    /// Whether regions still open at the end are exited.
    close_regions: bool,
}

/// A duration that is often zero, to make ties.
fn duration() -> impl Strategy<Value = u64> {
    prop_oneof![1 => Just(0u64), 3 => 1u64..=20]
}

/// A step with unreduced location numbers; see [`normalise`].
fn raw_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (0usize..6, duration())
            .prop_map(|(location, duration)| Step::Compute { location, duration }),
        3 => (0usize..6, select(REGIONS.to_vec()))
            .prop_map(|(location, region)| Step::Enter { location, region }),
        3 => (0usize..6).prop_map(|location| Step::Exit { location }),
        3 => (0usize..6, 0usize..6, duration()).prop_map(|(source, destination, latency)| {
            Step::Message { source, destination, latency }
        }),
        1 => Just(Step::Barrier),
        2 => (0usize..6, 0..LOCKS, duration())
            .prop_map(|(location, lock, duration)| Step::Lock { location, lock, duration }),
    ]
}

/// Makes a raw step valid for `locations` locations whose open regions are
/// counted in `depth`: locations wrap around, a message never goes to its
/// sender, exits with nothing open and enters beyond [`MAX_DEPTH`] vanish.
/// Shrinking the raw steps therefore always yields a valid program.
fn normalise(step: Step, locations: usize, depth: &mut [usize]) -> Option<Step> {
    Some(match step {
        Step::Compute { location, duration } => Step::Compute {
            location: location % locations,
            duration,
        },
        Step::Enter { location, region } => {
            let location = location % locations;
            if depth[location] == MAX_DEPTH {
                return None;
            }
            depth[location] += 1;
            Step::Enter { location, region }
        }
        Step::Exit { location } => {
            let location = location % locations;
            depth[location] = depth[location].checked_sub(1)?;
            Step::Exit { location }
        }
        Step::Message {
            source,
            destination,
            latency,
        } => {
            let source = source % locations;
            let mut destination = destination % locations;
            if destination == source {
                destination = (source + 1) % locations;
            }
            Step::Message {
                source,
                destination,
                latency,
            }
        }
        Step::Barrier => Step::Barrier,
        Step::Lock {
            location,
            lock,
            duration,
        } => Step::Lock {
            location: location % locations,
            lock,
            duration,
        },
    })
}

fn program<const K: usize>(max_steps: usize) -> impl Strategy<Value = Program<K>> {
    (
        2usize..=6,
        selected::<K>(),
        vec(raw_step(), 0..=max_steps),
        0u64..=10,
        any::<bool>(),
    )
        .prop_map(|(locations, selected, raw, sync, close_regions)| {
            let mut depth = vec![0; locations];
            let steps = raw
                .into_iter()
                .filter_map(|step| normalise(step, locations, &mut depth))
                .collect();
            Program {
                locations,
                selected,
                steps,
                sync,
                close_regions,
            }
        })
}

/// One timed event of a run, in generation order. Times are the clock reads
/// of the kernel calls (for a merge: its begin and end).
#[derive(Clone, Debug)]
enum Event {
    Enter {
        location: usize,
        region: u32,
        t: u64,
    },
    Exit {
        location: usize,
        region: u32,
        t: u64,
    },
    Send {
        location: usize,
        t: u64,
    },
    /// `send` is the index of the matching [`Event::Send`].
    Receive {
        location: usize,
        begin: u64,
        end: u64,
        send: usize,
        latency: u64,
    },
    /// `release` is the index of the previous holder's [`Event::Release`].
    Acquire {
        location: usize,
        begin: u64,
        end: u64,
        release: Option<usize>,
    },
    Release {
        location: usize,
        t: u64,
    },
    /// `begins[l]` is location `l`'s entry; all leave at `end`.
    Barrier {
        begins: Vec<u64>,
        end: u64,
        sync: u64,
    },
    /// The location's last point: a thread end, a release.
    Finish {
        location: usize,
        t: u64,
    },
}

/// Runs `program` with instrumentation costs `costs` charged the way the
/// kernel's `on_<event>` methods account for them (R1), and returns its
/// events. With [`Calibration::ZERO`] this is the truth.
///
/// Enter: `whole - inside` before its clock read, `inside` after. Exit:
/// `inside` before, `whole - inside` after. Send, unlock and thread end:
/// `send` after the clock read. Receive end, acquire and barrier exit:
/// `merge` after the end's clock read. A barrier entry costs nothing (the
/// backend only peeks). Transfer latency and barrier `S` are the program's.
fn run<const K: usize>(program: &Program<K>, costs: &Calibration) -> Vec<Event> {
    let n = program.locations;
    let mut clock = vec![0u64; n];
    let mut stacks: Vec<Vec<u32>> = vec![Vec::new(); n];
    // Per lock: index and time of the last release.
    let mut locks: [Option<(usize, u64)>; LOCKS] = [None; LOCKS];
    let mut events = Vec::new();
    let exit = |events: &mut Vec<Event>, clock: &mut u64, location: usize, region: u32| {
        let t = *clock + costs.exit.inside;
        *clock = t + costs.exit.outside();
        events.push(Event::Exit {
            location,
            region,
            t,
        });
    };
    for step in &program.steps {
        match *step {
            Step::Compute { location, duration } => clock[location] += duration,
            Step::Enter { location, region } => {
                let t = clock[location] + costs.enter.outside();
                clock[location] = t + costs.enter.inside;
                stacks[location].push(region);
                events.push(Event::Enter {
                    location,
                    region,
                    t,
                });
            }
            Step::Exit { location } => {
                let region = stacks[location]
                    .pop()
                    .expect("normalised exits match an enter");
                exit(&mut events, &mut clock[location], location, region);
            }
            Step::Message {
                source,
                destination,
                latency,
            } => {
                let sent = clock[source];
                clock[source] = sent + costs.send;
                let send = events.len();
                events.push(Event::Send {
                    location: source,
                    t: sent,
                });
                let begin = clock[destination];
                // The message leaves once its piggyback is packed (R1: the
                // send's cost falls between the release's clock read and
                // the departure).
                let end = begin.max(sent + costs.send + latency);
                clock[destination] = end + costs.merge;
                events.push(Event::Receive {
                    location: destination,
                    begin,
                    end,
                    send,
                    latency,
                });
            }
            Step::Barrier => {
                let begins = clock.clone();
                let end = begins.iter().max().expect("at least two locations") + program.sync;
                clock.fill(end + costs.merge);
                events.push(Event::Barrier {
                    begins,
                    end,
                    sync: program.sync,
                });
            }
            Step::Lock {
                location,
                lock,
                duration,
            } => {
                let begin = clock[location];
                let end = locks[lock].map_or(begin, |(_, released)| begin.max(released));
                events.push(Event::Acquire {
                    location,
                    begin,
                    end,
                    release: locks[lock].map(|(index, _)| index),
                });
                let t = end + costs.merge + duration;
                clock[location] = t + costs.send;
                // The lock is free once the release's record is stored.
                locks[lock] = Some((events.len(), t + costs.send));
                events.push(Event::Release { location, t });
            }
        }
    }
    for location in 0..n {
        if program.close_regions {
            while let Some(region) = stacks[location].pop() {
                exit(&mut events, &mut clock[location], location, region);
            }
        }
        events.push(Event::Finish {
            location,
            t: clock[location],
        });
    }
    events
}

/// What the kernel showed after one of its calls: the location's path
/// values, its approximated time, and a merge's outcome.
#[derive(Clone, Copy, Debug)]
struct Observation<const K: usize> {
    location: usize,
    snapshot: Snapshot<K>,
    approximated: i64,
    merged: Option<Merged>,
}

/// Drives one kernel per location online through `events`, in generation
/// order, the way a backend would: the piggyback of a send or unlock
/// travels to its receive or next acquire, a barrier exchanges every
/// entry record before anyone completes it (R6).
fn drive<const K: usize>(
    program: &Program<K>,
    events: &[Event],
    form: Form,
    costs: Calibration,
) -> Result<Vec<Observation<K>>, KernelError> {
    let mut kernels: Vec<Kernel<K>> = (0..program.locations)
        .map(|location| {
            let config = Config::new(location as u32, program.selected)
                .form(form)
                .calibration(costs);
            Location::new(config, 0)
        })
        .collect();
    let mut records: Vec<Option<Piggyback<K>>> = vec![None; events.len()];
    let mut seen = Vec::new();
    let observe = |kernel: &Kernel<K>, location: usize, merged: Option<Merged>| Observation {
        location,
        snapshot: kernel.snapshot(),
        approximated: kernel.last_approximated(),
        merged,
    };
    for (index, event) in events.iter().enumerate() {
        match *event {
            Event::Enter {
                location,
                region,
                t,
            } => {
                kernels[location].on_enter(region, 0, t)?;
                seen.push(observe(&kernels[location], location, None));
            }
            Event::Exit {
                location,
                region,
                t,
            } => {
                kernels[location].on_exit(region, t)?;
                seen.push(observe(&kernels[location], location, None));
            }
            Event::Send { location, t }
            | Event::Release { location, t }
            | Event::Finish { location, t } => {
                records[index] = Some(kernels[location].on_release(t)?);
                seen.push(observe(&kernels[location], location, None));
            }
            Event::Receive {
                location,
                begin,
                end,
                send,
                latency,
            } => {
                let record = records[send].expect("a receive follows its send");
                let dep = Dependency::message(&record, latency, 0);
                let merged = kernels[location].on_merge(begin, end, &[dep])?;
                seen.push(observe(&kernels[location], location, Some(merged)));
            }
            Event::Acquire {
                location,
                begin,
                end,
                release,
            } => {
                let record = release.map(|r| records[r].expect("an acquire follows the release"));
                let deps: Vec<Dependency<'_, K>> =
                    record.iter().map(Dependency::immediate).collect();
                let merged = kernels[location].on_merge(begin, end, &deps)?;
                seen.push(observe(&kernels[location], location, Some(merged)));
            }
            Event::Barrier {
                ref begins, end, ..
            } => {
                let entries: Vec<Exchange<K>> = begins
                    .iter()
                    .zip(&kernels)
                    .map(|(&begin, kernel)| Exchange::entry(&kernel.peek(begin), end - begin))
                    .collect();
                let exchange = Exchange::fold(&entries);
                for (location, &begin) in begins.iter().enumerate() {
                    let merged = kernels[location].on_collective(begin, end, &exchange)?;
                    seen.push(observe(&kernels[location], location, Some(merged)));
                }
            }
        }
    }
    Ok(seen)
}

// ===========================================================================
// Oracle: longest paths of the true run's activity graph, written plainly
// ===========================================================================

/// Weights of the synchronisation edges of the activity graph.
#[derive(Clone, Copy, Debug)]
struct EdgeWeights {
    /// Message edges weigh their latency (timestamped form) or 0
    /// (delay-only form, Hollingsworth).
    messages: bool,
    /// Barrier edges weigh `S` (timestamped form) or 0 (delay-only form).
    barriers: bool,
}

/// The longest path ending at one node of the activity graph.
#[derive(Clone, Copy, Debug)]
struct PathValue<const K: usize> {
    /// The location of the node; the lower one wins ties (R7).
    location: usize,
    longest: i64,
    /// Weight of the message and barrier edges on the path.
    transfer: i64,
    inclusive: [i64; K],
    exclusive: [i64; K],
    /// Per selected region: the longest path to the node when that
    /// region's weights are zero, over all paths (not only this one).
    net: [i64; K],
}

impl<const K: usize> PathValue<K> {
    fn start(location: usize) -> Self {
        PathValue {
            location,
            longest: 0,
            transfer: 0,
            inclusive: [0; K],
            exclusive: [0; K],
            net: [0; K],
        }
    }

    /// Follows a program-order edge of `weight` during which the regions of
    /// `stack` are open (innermost last).
    fn program_order(&mut self, weight: i64, stack: &[u32], selected: &[u32; K]) {
        self.longest += weight;
        for (k, region) in selected.iter().enumerate() {
            if stack.contains(region) {
                self.inclusive[k] += weight;
            } else {
                self.net[k] += weight;
            }
            if stack.last() == Some(region) {
                self.exclusive[k] += weight;
            }
        }
    }

    /// The value carried over a synchronisation edge of `weight`.
    fn over_edge(mut self, weight: i64) -> Self {
        self.longest += weight;
        self.transfer += weight;
        for net in &mut self.net {
            *net += weight;
        }
        self
    }

    /// Whether this candidate beats `other` at a merge node: the longer
    /// path; on equal length the one from the lower location. Two
    /// candidates of one location (a lock re-acquired by its last holder)
    /// go to the larger (transfer, inclusive, exclusive), the order
    /// `Snapshot::beats` documents, so the choice never depends on the
    /// order of the candidates.
    fn beats(&self, other: &Self) -> bool {
        let rank = |p: &Self| (p.longest, core::cmp::Reverse(p.location));
        let tail = |p: &Self| (p.transfer, p.inclusive, p.exclusive);
        (rank(self), tail(self)) > (rank(other), tail(other))
    }

    /// The path a record carries, ending at its releasing location.
    fn of_record(record: &Piggyback<K>) -> Self {
        PathValue {
            location: record.location as usize,
            longest: record.longest,
            transfer: record.transfer,
            inclusive: record.inclusive,
            exclusive: record.exclusive,
            net: record.net,
        }
    }

    fn snapshot(&self) -> Snapshot<K> {
        Snapshot {
            location: self.location as u32,
            active: true,
            longest: self.longest,
            transfer: self.transfer,
            inclusive: self.inclusive,
            exclusive: self.exclusive,
            net: self.net,
        }
    }
}

/// The value at a merge node of `location` whose incoming edges bring
/// `candidates`: the winner's length and shares, and per region the
/// largest net, each chosen independently (003 Fig. 4).
fn merge_node<const K: usize>(location: usize, candidates: &[PathValue<K>]) -> PathValue<K> {
    let mut best = candidates[0];
    for candidate in &candidates[1..] {
        if candidate.beats(&best) {
            best = *candidate;
        }
    }
    for k in 0..K {
        best.net[k] = candidates
            .iter()
            .map(|c| c.net[k])
            .max()
            .expect("candidates");
    }
    best.location = location;
    best
}

/// What the kernel should show after each of its calls in the truth run:
/// the longest path at the node, the true time, and a merge's true wait.
#[derive(Clone, Copy, Debug)]
struct Expected<const K: usize> {
    location: usize,
    path: PathValue<K>,
    time: u64,
    wait: Option<u64>,
}

/// Longest paths of the activity graph of the true run `truth`, by dynamic
/// programming in generation order (every edge points forwards in it).
///
/// Nodes are the events. Program-order edges weigh the true time between
/// consecutive events of a location, attributed to the regions open during
/// it, except that a merge's end follows its own begin with weight 0
/// (waiting never adds). A message edge goes from the send to the receive's
/// end; a lock edge from a release to the next acquire's end (weight 0); a
/// barrier edge from every entry to every exit, and no local edge into the
/// exit.
fn longest_paths<const K: usize>(
    program: &Program<K>,
    truth: &[Event],
    weights: EdgeWeights,
) -> Vec<Expected<K>> {
    struct Frontier<const K: usize> {
        time: u64,
        path: PathValue<K>,
        stack: Vec<u32>,
    }
    impl<const K: usize> Frontier<K> {
        /// Follows the program-order edge to a node at `time`.
        fn advance(&mut self, time: u64, selected: &[u32; K]) {
            let weight = (time - self.time) as i64;
            self.path.program_order(weight, &self.stack, selected);
            self.time = time;
        }
    }
    let selected = &program.selected;
    let mut frontier: Vec<Frontier<K>> = (0..program.locations)
        .map(|location| Frontier {
            time: 0,
            path: PathValue::start(location),
            stack: Vec::new(),
        })
        .collect();
    let mut nodes: Vec<Option<PathValue<K>>> = vec![None; truth.len()];
    let mut expected = Vec::new();
    let at = |f: &Frontier<K>, location: usize, wait: Option<u64>| Expected {
        location,
        path: f.path,
        time: f.time,
        wait,
    };
    for (index, event) in truth.iter().enumerate() {
        match *event {
            Event::Enter {
                location,
                region,
                t,
            } => {
                let f = &mut frontier[location];
                f.advance(t, selected);
                f.stack.push(region);
                expected.push(at(f, location, None));
            }
            Event::Exit { location, t, .. } => {
                let f = &mut frontier[location];
                f.advance(t, selected);
                f.stack.pop();
                expected.push(at(f, location, None));
            }
            Event::Send { location, t }
            | Event::Release { location, t }
            | Event::Finish { location, t } => {
                let f = &mut frontier[location];
                f.advance(t, selected);
                nodes[index] = Some(f.path);
                expected.push(at(f, location, None));
            }
            Event::Receive {
                location,
                begin,
                end,
                send,
                latency,
            } => {
                let weight = if weights.messages { latency as i64 } else { 0 };
                let sent = nodes[send].expect("send before receive").over_edge(weight);
                let f = &mut frontier[location];
                f.advance(begin, selected);
                f.path = merge_node(location, &[f.path, sent]);
                f.time = end;
                expected.push(at(f, location, Some(end - begin)));
            }
            Event::Acquire {
                location,
                begin,
                end,
                release,
            } => {
                let f = &mut frontier[location];
                f.advance(begin, selected);
                if let Some(r) = release {
                    let released = nodes[r].expect("release before acquire").over_edge(0);
                    f.path = merge_node(location, &[f.path, released]);
                }
                f.time = end;
                expected.push(at(f, location, Some(end - begin)));
            }
            Event::Barrier {
                ref begins,
                end,
                sync,
            } => {
                let weight = if weights.barriers { sync as i64 } else { 0 };
                let entries: Vec<PathValue<K>> = begins
                    .iter()
                    .zip(&mut frontier)
                    .map(|(&begin, f)| {
                        f.advance(begin, selected);
                        f.path.over_edge(weight)
                    })
                    .collect();
                for (location, f) in frontier.iter_mut().enumerate() {
                    let wait = end - f.time;
                    f.path = merge_node(location, &entries);
                    f.time = end;
                    expected.push(at(f, location, Some(wait)));
                }
            }
        }
    }
    expected
}

/// Compares the kernel's path values after every call with the oracle's.
fn same_paths<const K: usize>(
    seen: &[Observation<K>],
    expected: &[Expected<K>],
) -> Result<(), TestCaseError> {
    prop_assert_eq!(seen.len(), expected.len());
    for (call, (seen, expected)) in seen.iter().zip(expected).enumerate() {
        prop_assert_eq!(seen.location, expected.location);
        prop_assert_eq!(
            seen.snapshot,
            expected.path.snapshot(),
            "path after kernel call {} (location {})",
            call,
            expected.location
        );
    }
    Ok(())
}

/// Compares the kernel's approximated times and compensated waits after
/// every call with the true times and waits.
fn same_times<const K: usize>(
    seen: &[Observation<K>],
    expected: &[Expected<K>],
) -> Result<(), TestCaseError> {
    prop_assert_eq!(seen.len(), expected.len());
    for (call, (seen, expected)) in seen.iter().zip(expected).enumerate() {
        prop_assert_eq!(
            seen.approximated,
            expected.time as i64,
            "approximated time after kernel call {} (location {})",
            call,
            expected.location
        );
        prop_assert_eq!(
            seen.merged.map(|m| m.compensated_wait),
            expected.wait.map(|w| w as i64),
            "compensated wait of kernel call {} (location {})",
            call,
            expected.location
        );
    }
    Ok(())
}

/// Whether every merge of a measured run really waited: its dependency
/// arrived no earlier than the merge began, so its end is the arrival.
/// (A barrier needs no such condition: every participant leaves `S` after
/// the last arrival, which both forms reproduce exactly.)
fn every_merge_waited(measured: &[Event]) -> bool {
    measured.iter().all(|event| match *event {
        Event::Receive {
            begin,
            send,
            latency,
            ..
        } => match measured[send] {
            Event::Send { t, .. } => t + latency >= begin,
            _ => unreachable!("a receive names its send"),
        },
        Event::Acquire {
            begin,
            release: Some(r),
            ..
        } => match measured[r] {
            Event::Release { t, .. } => t >= begin,
            _ => unreachable!("an acquire names a release"),
        },
        _ => true,
    })
}

/// The transfer time `l_j` of a dependency released at `t_j` into a merge
/// from `begin` to `end` (R5): measured, `e - t_j`, when the merge began no
/// later than the release (001 m.1); otherwise the model clipped to
/// `[min(copy, e - t_j), e - t_j]` (001 m.2, eq. 9-10).
fn transfer_estimate(begin: u64, end: u64, record: &Piggyback<K2>, model: u64, copy: u64) -> i64 {
    let release = record.approximated + record.delay as i64;
    let upper = end as i64 - release;
    if begin as i64 <= release {
        upper
    } else {
        (model as i64).max((copy as i64).min(upper)).min(upper)
    }
}

/// The approximated time at which a dependency lets a merge end (R4, R5):
/// `a_j + l_j` when timestamps are comparable, else `e - x_j`; `None` for
/// a record without a delay (an uninstrumented peer, R3).
fn dependency_end(
    form: Form,
    begin: u64,
    end: u64,
    dep: &(Piggyback<K2>, u64, u64),
) -> Option<i64> {
    let (record, model, copy) = dep;
    if !record.flags.contains(Flags::DELAY) {
        None
    } else if form == Form::Timestamped && record.flags.contains(Flags::TIMESTAMP) {
        Some(record.approximated + transfer_estimate(begin, end, record, *model, *copy))
    } else {
        Some(end as i64 - record.delay as i64)
    }
}

/// The paths that `deps` bring to a merge from `begin` to `end`, each
/// carried over its edge `l_j` (R7: 0 in the delay-only form, the R5
/// transfer estimate otherwise).
fn incoming_paths(
    form: Form,
    begin: u64,
    end: u64,
    deps: &[(Piggyback<K2>, u64, u64)],
) -> Vec<PathValue<K2>> {
    deps.iter()
        .filter(|(record, ..)| record.flags.contains(Flags::PATH))
        .map(|(record, model, copy)| {
            let stamped = record.flags.contains(Flags::TIMESTAMP.with(Flags::DELAY));
            let transfer = if form == Form::Timestamped && stamped {
                transfer_estimate(begin, end, record, *model, *copy)
            } else {
                0
            };
            PathValue::of_record(record).over_edge(transfer)
        })
        .collect()
}

/// The path values R7 gives `kernel` when it merges `deps` from `begin` to
/// `end`; `None` where no path is chosen (a stopped location, or an idle
/// one that receives no path data). Ties between equally long paths go to
/// the lower location id, whatever the order of the dependencies.
fn expected_merge(
    kernel: &Kernel<K2>,
    begin: u64,
    end: u64,
    deps: &[(Piggyback<K2>, u64, u64)],
) -> Option<PathValue<K2>> {
    let id = kernel.id() as usize;
    let incoming = incoming_paths(kernel.form(), begin, end, deps);
    let local = match kernel.path_state() {
        PathState::Active => PathValue::of_record(&kernel.peek(begin)),
        // R9, 003 §2.3 case 3: path data starts an idle location, empty.
        PathState::Idle if !incoming.is_empty() => PathValue::start(id),
        PathState::Idle | PathState::Stopped => return None,
    };
    let candidates: Vec<PathValue<K2>> = core::iter::once(local).chain(incoming).collect();
    Some(merge_node(id, &candidates))
}

// ===========================================================================
// Properties
// ===========================================================================

/// Property 1 (R3): fixed-size little-endian encoding, clear errors.
#[test]
fn piggyback_encoding_round_trips_and_rejects_truncated_or_foreign_bytes() {
    let strategy = (
        piggyback::<0>(),
        piggyback::<1>(),
        piggyback::<4>(),
        piggyback::<32>(),
        vec(any::<u8>(), 0..900),
        disguise(),
    );
    check(
        "piggyback-encoding",
        10_000,
        strategy,
        |(p0, p1, p4, p32, garbage, disguise)| {
            check_encoding(&p0)?;
            check_encoding(&p1)?;
            check_encoding(&p4)?;
            check_encoding(&p32)?;
            check_garbage::<0>(&disguised::<0>(&garbage, disguise))?;
            check_garbage::<1>(&disguised::<1>(&garbage, disguise))?;
            check_garbage::<4>(&disguised::<4>(&garbage, disguise))?;
            check_garbage::<32>(&disguised::<32>(&garbage, disguise))?;
            Ok(())
        },
    );
}

/// Property 2 (R4, R5, R7): a merge of a random location state with 1-6
/// dependencies gives the same outcome and the same state whatever the
/// order of the dependencies, and keeps the path that R7 picks among the
/// local one and the dependencies' (the oracle's plain [`merge_node`]).
#[test]
fn merge_does_not_depend_on_dependency_order() {
    let strategy = (
        location_spec(),
        vec(action(), 0..12),
        0u64..30,
        vec(dep_spec(), 1..=6),
        vec(any::<u32>(), 6),
    );
    check(
        "merge-order",
        10_000,
        strategy,
        |(spec, history, wait, specs, keys)| {
            let mut kernel = spec.kernel(spec.form);
            let mut replay = Replay::default();
            for action in &history {
                let base = kernel.peek(replay.clock);
                if let Some(call) = replay.call(action, &base) {
                    prop_assert!(apply(&mut kernel, &call).is_ok(), "{:?}", call);
                }
            }
            let begin = replay.clock;
            let end = begin + wait;
            let base = kernel.peek(begin);
            let records: Vec<(Piggyback<K2>, u64, u64)> = specs
                .iter()
                .map(|d| (d.piggyback(end, &base), d.model, d.copy))
                .collect();
            let order = permutation(&keys, records.len());
            let shuffled: Vec<_> = order.iter().map(|&j| records[j]).collect();
            let expected = expected_merge(&kernel, begin, end, &records);
            let own_end = begin as i64 - kernel.delay() as i64;
            let informed = records
                .iter()
                .any(|(record, ..)| record.flags.contains(Flags::DELAY));

            let mut forward = kernel.clone();
            let mut backward = kernel.clone();
            let one = forward.on_merge(begin, end, &dependencies(&records));
            let other = backward.on_merge(begin, end, &dependencies(&shuffled));
            let (one, other) = match (one, other) {
                (Ok(one), Ok(other)) => (one, other),
                failed => return Err(TestCaseError::fail(format!("{failed:?}"))),
            };
            // Which of several equally late dependencies "determined" the
            // end depends on the order; the end it determined does not.
            let order_free = |m: &Merged| Merged {
                determined_by: None,
                ..*m
            };
            prop_assert_eq!(order_free(&one), order_free(&other));
            for (merged, deps) in [(&one, &records), (&other, &shuffled)] {
                let determined = match merged.determined_by {
                    Some(j) => dependency_end(spec.form, begin, end, &deps[j]),
                    None if informed => Some(own_end),
                    // R3: no dependency carried a delay; the state is
                    // unchanged and the wait stays as measured.
                    None => Some(own_end + wait as i64),
                };
                prop_assert_eq!(determined, Some(merged.approximated_end));
            }
            prop_assert_eq!(forward.delay(), backward.delay());
            prop_assert_eq!(forward.last_approximated(), backward.last_approximated());
            prop_assert_eq!(forward.path_state(), backward.path_state());
            prop_assert_eq!(forward.snapshot(), backward.snapshot());
            if let Some(expected) = expected {
                prop_assert_eq!(forward.snapshot(), expected.snapshot());
            }
            Ok(())
        },
    );
}

/// Property 2, n-to-n (R6): the exchange record folds to the same value in
/// any order and any grouping, with `Exchange::EMPTY` as identity.
#[test]
fn exchange_combine_is_associative_and_commutative() {
    let entry = (dep_spec(), 0u64..50).prop_map(|(spec, wait)| {
        let base = Piggyback::<K2>::EMPTY;
        Exchange::entry(&spec.piggyback(1_000, &base), wait)
    });
    let strategy = (vec(entry, 1..=8), vec(any::<u32>(), 8), any::<u64>());
    check(
        "exchange-combine",
        10_000,
        strategy,
        |(entries, keys, tree_choices)| {
            let folded = Exchange::fold(&entries);
            prop_assert_eq!(folded.participants as usize, entries.len());
            for (a, b) in entries.iter().zip(entries.iter().skip(1)) {
                prop_assert_eq!(a.combine(b), b.combine(a));
            }
            for triple in entries.windows(3) {
                let (a, b, c) = (&triple[0], &triple[1], &triple[2]);
                prop_assert_eq!(a.combine(b).combine(c), a.combine(&b.combine(c)));
            }
            prop_assert_eq!(Exchange::EMPTY.combine(&folded), folded);
            prop_assert_eq!(folded.combine(&Exchange::EMPTY), folded);

            let order = permutation(&keys, entries.len());
            let shuffled = Exchange::fold(order.iter().map(|&j| &entries[j]));
            prop_assert_eq!(shuffled, folded);

            // A random reduction tree: repeatedly combine two neighbours.
            let mut partial = entries.clone();
            let mut choices = tree_choices;
            while partial.len() > 1 {
                let i = (choices % (partial.len() as u64 - 1)) as usize;
                choices /= 7;
                let right = partial.remove(i + 1);
                partial[i] = partial[i].combine(&right);
            }
            prop_assert_eq!(partial[0], folded);
            Ok(())
        },
    );
}

/// Property 3 (R4, R5), the pure functions: with consistent dependencies
/// (released no later than the merge's end) the delay-only end is the
/// timestamped upper bound, so never earlier than the timestamped end.
#[test]
fn delay_only_merge_is_never_earlier_than_timestamped() {
    let strategy = (0u64..200, 0u64..50, 0u64..250, vec(dep_spec(), 0..=6));
    check(
        "delay-only-vs-timestamped",
        10_000,
        strategy,
        |(begin, wait, delay, specs)| {
            let end = begin + wait;
            let delay = delay.min(begin);
            let base = Piggyback::<K2>::EMPTY;
            let records: Vec<_> = specs
                .iter()
                .map(|d| (d.piggyback(end, &base), d.model, d.copy))
                .collect();
            let deps = dependencies(&records);
            let delay_only = merge::approximate(Form::DelayOnly, begin, end, delay, &deps);
            let stamped = merge::approximate(Form::Timestamped, begin, end, delay, &deps);
            prop_assert!(
                delay_only.end >= stamped.end,
                "{:?} {:?}",
                delay_only,
                stamped
            );
            // 000 Fig. 7 read as a time: R4 is R5 at the upper bound (001 eq. 5).
            prop_assert_eq!(delay_only.end, stamped.upper);
            prop_assert!(stamped.lower <= stamped.end && stamped.end <= stamped.upper);
            for approximation in [delay_only, stamped] {
                let own = begin as i64 - delay as i64;
                prop_assert!(own <= approximation.end && approximation.end <= end as i64);
                prop_assert_eq!(approximation.delay as i64, end as i64 - approximation.end);
            }
            Ok(())
        },
    );
}

/// Property 3 through `Location`: two kernels with one configuration but
/// the form replay one random history (merges, collectives, regions); the
/// delay-only one is never earlier, at any event.
#[test]
fn delay_only_location_is_never_earlier_than_timestamped() {
    let strategy = (location_spec(), vec(action(), 0..20));
    check(
        "delay-only-location",
        10_000,
        strategy,
        |(spec, history)| {
            let spec = LocationSpec {
                path: PathState::Active,
                ..spec
            };
            let mut delay_only = spec.kernel(Form::DelayOnly);
            let mut stamped = spec.kernel(Form::Timestamped);
            let mut replay = Replay::default();
            for action in &history {
                let base = stamped.peek(replay.clock);
                let Some(call) = replay.call(action, &base) else {
                    continue;
                };
                let late = apply(&mut delay_only, &call);
                let early = apply(&mut stamped, &call);
                match (late, early) {
                    (Ok(Some(late)), Ok(Some(early))) => {
                        prop_assert!(
                            late.approximated_end >= early.approximated_end,
                            "{:?}: delay-only {:?}, timestamped {:?}",
                            call,
                            late,
                            early
                        );
                    }
                    (Ok(None), Ok(None)) => {}
                    failed => return Err(TestCaseError::fail(format!("{failed:?}"))),
                }
                prop_assert!(delay_only.last_approximated() >= stamped.last_approximated());
            }
            Ok(())
        },
    );
}

/// A release taken in the lazy form ([`Pending`]) reads back as exactly
/// the record the eager release makes, and leaves the location in the same
/// state (R3, R7): two kernels replay one random history (regions, merges,
/// collectives, every path state), one releasing eagerly, the other
/// lazily; at every release the records are equal, and after every call
/// the two kernels' delays and snapshots are.
#[test]
fn a_pending_release_reads_back_as_the_eager_record() {
    let strategy = (location_spec(), vec(action(), 0..24), 0u64..20);
    check(
        "pending-release",
        10_000,
        strategy,
        |(spec, history, cost)| {
            let mut eager = spec.kernel(spec.form);
            let mut lazy = spec.kernel(spec.form);
            let mut replay = Replay::default();
            let mut pending = Pending::EMPTY;
            prop_assert_eq!(pending.piggyback(), Piggyback::<K2>::EMPTY);
            for action in &history {
                let base = eager.peek(replay.clock);
                let Some(call) = replay.call(action, &base) else {
                    continue;
                };
                if let Call::Release { t } = call {
                    let mut record = Piggyback::EMPTY;
                    let a = eager.on_release_costing_into(t, cost, &mut record);
                    let b = lazy.on_release_costing_pending(t, cost, &mut pending);
                    prop_assert_eq!(a, b);
                    if a.is_ok() {
                        prop_assert_eq!(pending.piggyback(), record);
                        prop_assert_eq!(pending.location(), record.location);
                        prop_assert_eq!(pending.flags(), record.flags);
                    }
                } else {
                    let a = apply(&mut eager, &call);
                    let b = apply(&mut lazy, &call);
                    prop_assert_eq!(format!("{a:?}"), format!("{b:?}"));
                }
                prop_assert_eq!(eager.delay(), lazy.delay());
                prop_assert_eq!(eager.snapshot(), lazy.snapshot());
            }
            Ok(())
        },
    );
}

/// Default number of random executions per property.
const EXECUTIONS: u32 = 2_000;
/// Longest generated program, in steps.
const PROGRAM_STEPS: usize = 40;

/// Runs `program` with `costs` and drives the kernel in `form` with it;
/// returns the measured run, the kernel's values after every call and the
/// longest paths of the true run, whose edges weigh what `form` weighs
/// them: latency and `S` (timestamped), nothing (delay-only,
/// Hollingsworth's path, 003 Fig. 2).
fn observe<const K: usize>(
    program: &Program<K>,
    form: Form,
    costs: Calibration,
) -> Result<Observed<K>, TestCaseError> {
    let truth = run(program, &Calibration::ZERO);
    let measured = run(program, &costs);
    let timestamped = form == Form::Timestamped;
    let weights = EdgeWeights {
        messages: timestamped,
        barriers: timestamped,
    };
    let expected = longest_paths(program, &truth, weights);
    let seen = drive(program, &measured, form, costs)
        .map_err(|e| TestCaseError::fail(format!("kernel refused a call: {e}")))?;
    Ok(Observed {
        measured,
        seen,
        expected,
    })
}

/// What [`observe`] returns.
struct Observed<const K: usize> {
    /// The measured run.
    measured: Vec<Event>,
    /// The kernel's values after every call.
    seen: Vec<Observation<K>>,
    /// The true run's longest paths at every call.
    expected: Vec<Expected<K>>,
}

/// Property 4, the main oracle (DESIGN.md §4): timestamped form, exact
/// calibration, kernel online in the measured run. Every approximated time
/// and compensated wait is the true one, and the path values after every
/// call (so at every location's end) are the longest path of the true
/// run's activity graph with its shares, transfer share and nets.
#[test]
fn execution_timestamped_reproduces_truth_and_its_longest_path() {
    let strategy = (program::<3>(PROGRAM_STEPS), calibration(1..50));
    check(
        "execution-timestamped",
        EXECUTIONS,
        strategy,
        |(program, costs)| {
            let Observed { seen, expected, .. } = observe(&program, Form::Timestamped, costs)?;
            same_times(&seen, &expected)?;
            same_paths(&seen, &expected)?;
            Ok(())
        },
    );
}

/// Property 4, delay-only form on the truth itself (no instrumentation
/// cost): the kernel finds Hollingsworth's longest path, in which message
/// and barrier edges weigh nothing (003 Fig. 2), and changes no time.
#[test]
fn execution_delay_only_without_cost_finds_hollingsworth_path() {
    check(
        "execution-delay-only-truth",
        EXECUTIONS,
        program::<2>(PROGRAM_STEPS),
        |program| {
            let Observed { seen, expected, .. } =
                observe(&program, Form::DelayOnly, Calibration::ZERO)?;
            same_times(&seen, &expected)?;
            same_paths(&seen, &expected)?;
            Ok(())
        },
    );
}

/// Property 4, delay-only form with instrumentation cost (R4): every
/// approximated time is never earlier than the true one, and equal to it
/// when every merge of the measured run really waited; the path is
/// Hollingsworth's on the true run whether or not the merges waited.
#[test]
fn execution_delay_only_is_never_earlier_than_truth() {
    let strategy = (program::<3>(PROGRAM_STEPS), calibration(1..50));
    check(
        "execution-delay-only-measured",
        EXECUTIONS,
        strategy,
        |(program, costs)| {
            let Observed {
                measured,
                seen,
                expected,
            } = observe(&program, Form::DelayOnly, costs)?;
            prop_assert_eq!(seen.len(), expected.len());
            let exact = every_merge_waited(&measured);
            for (call, (seen, expected)) in seen.iter().zip(&expected).enumerate() {
                prop_assert!(
                    seen.approximated >= expected.time as i64,
                    "approximated time {} before the truth {} after kernel call {}",
                    seen.approximated,
                    expected.time,
                    call
                );
                if exact {
                    prop_assert_eq!(
                        seen.approximated,
                        expected.time as i64,
                        "kernel call {}",
                        call
                    );
                }
            }
            // Between merges the compensated time is exact in either form,
            // and waiting never adds, so the path is Hollingsworth's.
            same_paths(&seen, &expected)?;
            Ok(())
        },
    );
}
