//! The fidelity program (README "Threads"): threads with imbalanced work
//! under a lock, a barrier and a work queue, with a heavy instrumentation
//! load (a region around every ~40 ns of work, a lock/unlock pair every
//! fourth one). Generic over the primitives, so that the uninstrumented
//! run contains no heisen code at all.

use std::sync::Arc;
use std::time::Instant;

/// Primitives and regions, std's or heisen's.
pub(crate) trait Kit: 'static {
    /// The accumulator's lock.
    type Lock: Send + Sync + 'static;
    /// The phase barrier.
    type Barrier: Send + Sync + 'static;
    /// A phase's work queue.
    type Queue: Send + Sync + 'static;
    /// A lock holding `v`.
    fn lock(v: u64) -> Self::Lock;
    /// Adds under the lock.
    fn add(l: &Self::Lock, v: u64);
    /// A barrier of `n`.
    fn barrier(n: usize) -> Self::Barrier;
    /// Waits at the barrier.
    fn wait(b: &Self::Barrier);
    /// An empty queue.
    fn queue() -> Self::Queue;
    /// Enqueues a task.
    fn push(q: &Self::Queue, task: u64);
    /// Dequeues a task; `None` once closed and empty.
    fn pop(q: &Self::Queue) -> Option<u64>;
    /// Closes the queue.
    fn close(q: &Self::Queue);
    /// Runs `f` in region `name`.
    fn region<R>(name: &'static str, f: impl FnOnce() -> R) -> R;
    /// Spawns a thread; the returned closure joins it.
    fn spawn(f: impl FnOnce() -> Timing + Send + 'static) -> Box<dyn FnOnce() -> Timing>;
    /// The calling thread's location, measured time and compensated clock
    /// `(id, t, a = t - x, overhead)`; `None` uninstrumented.
    fn clock() -> Option<(u32, u64, i64, u64)>;
}

/// One thread's timing in one run.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Timing {
    /// Wall time from the spawn (for main: from its first spawn) to the
    /// thread's end, ns.
    pub(crate) wall: u64,
    /// The thread's report location (instrumented runs).
    pub(crate) location: Option<u32>,
    /// For main only: its compensated and local-only elapsed, measured
    /// in-process from its own kernel.
    pub(crate) main: Option<(i64, i64)>,
    /// The thread's CPU time, ns (steadier than wall time on a shared
    /// machine).
    pub(crate) cpu: u64,
    /// The instrumentation overhead heisen charged the thread, ns.
    pub(crate) overhead: u64,
    /// What the thread did: its instrumented actions by kind.
    pub(crate) counts: Counts,
}

/// One thread's instrumented actions by kind.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Counts {
    /// `cell` regions (an enter+exit pair each).
    pub(crate) cells: u64,
    /// Other regions (`compute`, `task`).
    pub(crate) regions: u64,
    /// Lock/unlock pairs of the thread's own mutex.
    pub(crate) own: u64,
    /// Lock/unlock pairs of the shared mutex.
    pub(crate) shared: u64,
    /// Barrier waits.
    pub(crate) barriers: u64,
    /// Queue pushes.
    pub(crate) pushes: u64,
    /// Queue pops (the last one of each phase finds the queue closed).
    pub(crate) pops: u64,
}

/// The calling thread's CPU time, ns.
pub(crate) fn thread_cpu() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to write into.
    #[allow(unsafe_code)] // reason: the clock has no safe binding in std
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "CLOCK_THREAD_CPUTIME_ID");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The program's size.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape {
    /// Worker threads.
    pub(crate) threads: usize,
    /// Phases (each: compute, barrier, queue, barrier).
    pub(crate) phases: usize,
    /// Cells of the lightest worker per phase.
    pub(crate) cells: u64,
    /// Tasks per phase's queue.
    pub(crate) tasks: u64,
    /// Cells between two updates of the thread's own accumulator.
    pub(crate) own_every: u64,
    /// Cells between two updates of the shared accumulator.
    pub(crate) shared_every: u64,
}

/// About 40 ns of dependent integer work.
#[inline(never)]
pub(crate) fn cell(mut x: u64) -> u64 {
    for _ in 0..20 {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        x ^= x >> 29;
    }
    core::hint::black_box(x)
}

struct Shared<K: Kit> {
    lock: K::Lock,
    barrier: K::Barrier,
    queues: Vec<K::Queue>,
}

fn worker<K: Kit>(w: usize, shape: Shape, shared: &Shared<K>) -> (u64, Counts) {
    let own = &K::lock(0);
    let mut acc = w as u64 + 1;
    let mut n = Counts::default();
    for p in 0..shape.phases {
        // Imbalance: each phase a different thread has the most to do.
        let cells = shape.cells * (1 + ((w + p) % shape.threads) as u64);
        K::region("compute", || {
            for c in 0..cells {
                acc = K::region("cell", || cell(acc));
                if c % shape.own_every == 0 {
                    K::add(own, acc & 1); // this thread's lock: uncontended
                    n.own += 1;
                }
                if c % shape.shared_every == 0 {
                    K::add(&shared.lock, acc & 1); // the shared accumulator
                    n.shared += 1;
                }
            }
        });
        n.cells += cells;
        n.regions += 1;
        K::wait(&shared.barrier);
        let queue = &shared.queues[p];
        if w == 0 {
            for t in 0..shape.tasks {
                K::push(queue, t);
            }
            K::close(queue);
            n.pushes += shape.tasks;
        }
        while let Some(t) = K::pop(queue) {
            let steps = 8 + (t * 7_919) % 24;
            K::region("task", || {
                for _ in 0..steps {
                    acc = K::region("cell", || cell(acc));
                }
            });
            n.pops += 1;
            n.regions += 1;
            n.cells += steps;
        }
        n.pops += 1;
        n.barriers += 2;
        K::wait(&shared.barrier);
    }
    (acc, n)
}

/// Runs the program once: main's timing first, then each worker's.
pub(crate) fn run<K: Kit>(shape: Shape) -> Vec<Timing> {
    let shared = Arc::new(Shared::<K> {
        lock: K::lock(0),
        barrier: K::barrier(shape.threads),
        queues: (0..shape.phases).map(|_| K::queue()).collect(),
    });
    let start = Instant::now();
    let before = K::clock();
    let joins: Vec<_> = (0..shape.threads)
        .map(|w| {
            let shared = shared.clone();
            let spawned = Instant::now();
            K::spawn(move || {
                let (acc, counts) = worker(w, shape, &shared);
                core::hint::black_box(acc);
                let clock = K::clock();
                Timing {
                    wall: spawned.elapsed().as_nanos() as u64,
                    location: clock.map(|c| c.0),
                    main: None,
                    cpu: thread_cpu(),
                    overhead: clock.map_or(0, |c| c.3),
                    counts,
                }
            })
        })
        .collect();
    let workers: Vec<Timing> = joins.into_iter().map(|join| join()).collect();
    let after = K::clock();
    let wall = start.elapsed().as_nanos() as u64;
    let main = before
        .zip(after)
        .map(|((id, t0, a0, o0), (_, t1, a1, o1))| {
            let _ = id;
            (a1 - a0, (t1 - t0) as i64 - (o1 - o0) as i64)
        });
    let mut out = vec![Timing {
        wall,
        location: before.map(|c| c.0),
        main,
        cpu: 0,
        overhead: 0,
        counts: Counts::default(),
    }];
    out.extend(workers);
    out
}

/// std's primitives, no heisen code.
#[derive(Debug)]
pub(crate) struct Plain;

/// std's queue: a deque under a mutex with a condition variable, the
/// closed flag and the number of waiting consumers (woken only when there
/// are some, as heisen's `WorkQueue` does).
pub(crate) type StdQueue = (
    std::sync::Mutex<(std::collections::VecDeque<u64>, bool, usize)>,
    std::sync::Condvar,
);

impl Kit for Plain {
    type Lock = std::sync::Mutex<u64>;
    type Barrier = std::sync::Barrier;
    type Queue = StdQueue;
    fn lock(v: u64) -> Self::Lock {
        std::sync::Mutex::new(v)
    }
    fn add(l: &Self::Lock, v: u64) {
        *l.lock().expect("lock") += v;
    }
    fn barrier(n: usize) -> Self::Barrier {
        std::sync::Barrier::new(n)
    }
    fn wait(b: &Self::Barrier) {
        b.wait();
    }
    fn queue() -> Self::Queue {
        Default::default()
    }
    fn push(q: &Self::Queue, task: u64) {
        let waiting = {
            let mut g = q.0.lock().expect("queue");
            g.0.push_back(task);
            g.2
        };
        if waiting > 0 {
            q.1.notify_one();
        }
    }
    fn pop(q: &Self::Queue) -> Option<u64> {
        let mut g = q.0.lock().expect("queue");
        loop {
            if let Some(t) = g.0.pop_front() {
                return Some(t);
            }
            if g.1 {
                return None;
            }
            g.2 += 1;
            g = q.1.wait(g).expect("queue");
            g.2 -= 1;
        }
    }
    fn close(q: &Self::Queue) {
        let waiting = {
            let mut g = q.0.lock().expect("queue");
            g.1 = true;
            g.2
        };
        if waiting > 0 {
            q.1.notify_all();
        }
    }
    fn region<R>(_name: &'static str, f: impl FnOnce() -> R) -> R {
        f()
    }
    fn spawn(f: impl FnOnce() -> Timing + Send + 'static) -> Box<dyn FnOnce() -> Timing> {
        let h = std::thread::spawn(f);
        Box::new(move || h.join().expect("worker"))
    }
    fn clock() -> Option<(u32, u64, i64, u64)> {
        None
    }
}

/// heisen's wrappers and regions.
#[derive(Debug)]
pub(crate) struct Heisen;

impl Kit for Heisen {
    type Lock = heisen_shmem::Mutex<u64>;
    type Barrier = heisen_shmem::Barrier;
    type Queue = heisen_shmem::WorkQueue<u64>;
    fn lock(v: u64) -> Self::Lock {
        heisen_shmem::Mutex::new(v)
    }
    fn add(l: &Self::Lock, v: u64) {
        *l.lock().expect("lock") += v;
    }
    fn barrier(n: usize) -> Self::Barrier {
        heisen_shmem::Barrier::new(n)
    }
    fn wait(b: &Self::Barrier) {
        b.wait();
    }
    fn queue() -> Self::Queue {
        heisen_shmem::WorkQueue::new()
    }
    fn push(q: &Self::Queue, task: u64) {
        q.push(task);
    }
    fn pop(q: &Self::Queue) -> Option<u64> {
        q.pop()
    }
    fn close(q: &Self::Queue) {
        q.close();
    }
    fn region<R>(name: &'static str, f: impl FnOnce() -> R) -> R {
        heisen_shmem::in_region(name, f)
    }
    fn spawn(f: impl FnOnce() -> Timing + Send + 'static) -> Box<dyn FnOnce() -> Timing> {
        let h = heisen_shmem::spawn(f);
        Box::new(move || h.join().expect("worker"))
    }
    fn clock() -> Option<(u32, u64, i64, u64)> {
        heisen_shmem::with_current(|s| {
            let t = s.now();
            let k = s.kernel();
            (k.id(), t, t as i64 - k.delay() as i64, k.overhead())
        })
    }
}

/// Per thread of one instrumented run: (instrumented wall, compensated,
/// local-only) in ns, main first, from the runtime's report of the
/// finished worker threads.
pub(crate) fn compensated(timings: &[Timing]) -> Vec<(u64, i64, i64)> {
    let report = heisen_shmem::report::build(heisen_shmem::runtime());
    timings
        .iter()
        .map(|t| {
            if let Some((comp, local)) = t.main {
                return (t.wall, comp, local);
            }
            let l = report
                .locations
                .iter()
                .find(|l| Some(l.location) == t.location)
                .expect("a finished worker's location");
            // From the spawn, as the wall time: the child's approximated
            // start is the spawner's approximated spawn (R8).
            let comp = l.approximated_end - l.approximated_start;
            (t.wall, comp, t.wall as i64 - l.overhead as i64)
        })
        .collect()
}

/// What [`measure`] found, per thread (main first), medians over the runs.
pub(crate) struct Measured {
    /// Wall times: `(uninstrumented, instrumented, compensated,
    /// local-only)`, ns.
    pub(crate) wall: Vec<[f64; 4]>,
    /// Thread CPU times: `(uninstrumented, instrumented, overhead
    /// charged)`, ns; zeros for main, which is not timed so.
    pub(crate) cpu: Vec<[f64; 3]>,
}

/// Medians per thread over alternating runs of both versions
/// ([`Measured`]). With `FIDELITY_DETAIL` set, also prints per worker the
/// thread CPU time of every run, its actions by kind and the calibrated
/// cost of each action.
pub(crate) fn measure(shape: Shape, runs: usize) -> Measured {
    let mut plain: Vec<Vec<f64>> = vec![Vec::new(); shape.threads + 1];
    let mut heisen: Vec<Vec<[f64; 3]>> = vec![Vec::new(); shape.threads + 1];
    // Per worker: plain CPU, instrumented CPU, charged overhead.
    let mut cpu: Vec<Vec<[f64; 3]>> = vec![Vec::new(); shape.threads + 1];
    let mut counts = vec![Counts::default(); shape.threads + 1];
    // A warm-up of each version, not counted: the first use of heisen's
    // wrappers calibrates them (charged, but a pause all the same).
    run::<Plain>(shape);
    run::<Heisen>(shape);
    for _ in 0..runs {
        let p = run::<Plain>(shape);
        for (i, t) in p.iter().enumerate() {
            plain[i].push(t.wall as f64);
        }
        let timings = run::<Heisen>(shape);
        for (i, (wall, comp, local)) in compensated(&timings).into_iter().enumerate() {
            heisen[i].push([wall as f64, comp as f64, local as f64]);
            cpu[i].push([
                p[i].cpu as f64,
                timings[i].cpu as f64,
                timings[i].overhead as f64,
            ]);
            counts[i] = timings[i].counts;
        }
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    if std::env::var_os("FIDELITY_DETAIL").is_some() {
        detail(&cpu, &counts);
    }
    let wall = (0..=shape.threads)
        .map(|i| {
            let h = &heisen[i];
            [
                median(plain[i].clone()),
                median(h.iter().map(|x| x[0]).collect()),
                median(h.iter().map(|x| x[1]).collect()),
                median(h.iter().map(|x| x[2]).collect()),
            ]
        })
        .collect();
    let cpu = cpu
        .iter()
        .map(|runs| core::array::from_fn(|k| median(runs.iter().map(|x| x[k]).collect())))
        .collect();
    Measured { wall, cpu }
}

/// `FIDELITY_DETAIL`: per worker, the medians of thread CPU time without
/// and with heisen, the overhead heisen charged and what is left over
/// (instrumented − plain − charged: positive when the actions cost the
/// program more than their calibrated costs), per run too; its actions by
/// kind; and every calibrated cost.
fn detail(cpu: &[Vec<[f64; 3]>], counts: &[Counts]) {
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let rt = heisen_shmem::runtime();
    for (name, cost) in rt.actions() {
        let own = rt.own_time(rt.action(&name));
        eprintln!(
            "action {name:<24} whole {:>4} inside {:>4} plain operation {own:>3}",
            cost.whole, cost.inside
        );
    }
    eprintln!("calibration {:?}", rt.calibration());
    for (w, (runs, n)) in cpu.iter().zip(counts).enumerate().skip(1) {
        let per_run: Vec<String> = runs
            .iter()
            .map(|x| {
                format!(
                    "{:.1}/{:.1}/{:+.1}",
                    x[0] / 1e6,
                    x[1] / 1e6,
                    (x[1] - x[0] - x[2]) / 1e6
                )
            })
            .collect();
        eprintln!(
            "worker {} CPU per run (plain/instrumented/uncharged), ms: {}",
            w - 1,
            per_run.join(" ")
        );
        let col = |k: usize| median(runs.iter().map(|x| x[k]).collect());
        let left = median(runs.iter().map(|x| x[1] - x[0] - x[2]).collect());
        eprintln!(
            "worker {}: CPU plain {:.3} ms, instrumented {:.3} ms, charged {:.3} ms, uncharged {:+.3} ms ({:+.1} % of plain); {n:?}",
            w - 1,
            col(0) / 1e6,
            col(1) / 1e6,
            col(2) / 1e6,
            left / 1e6,
            100.0 * left / col(0),
        );
    }
}
