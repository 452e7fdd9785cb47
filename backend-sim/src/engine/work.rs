//! CPU work: a compute operation keeps its location's CPU for a fixed
//! time or one drawn from the location's own ChaCha stream (seeded by the
//! program's seed and the location's id, so that every run of a program
//! draws the same times, and the truth and the measured run do the same
//! work).

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

use crate::program::{Duration, LocationId};

use super::record::TraceKind;
use super::world::{Flow, World};

/// `l` computes for `d`.
#[inline]
pub(super) fn compute(w: &mut World<'_>, l: LocationId, d: Duration) -> Flow {
    let now = w.now;
    let seed = w.program.seed;
    let loc = &mut w.locs[l as usize];
    let ns = match d {
        Duration::Fixed(ns) => ns,
        _ => draw(
            loc.rng.get_or_insert_with(|| {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                rng.set_stream(u64::from(l));
                Box::new(rng)
            }),
            d,
        ),
    };
    loc.advance();
    if ns == 0 {
        return Flow::Next;
    }
    loc.host.on_compute(now, ns);
    w.record(l, TraceKind::Compute, now, now + ns);
    w.next_step(l);
    Flow::Stop
}

/// Draws a compute time (ns) from `d`, deterministically from the
/// location's own ChaCha stream.
fn draw(rng: &mut ChaCha8Rng, d: Duration) -> u64 {
    let unit = |rng: &mut ChaCha8Rng| {
        // (0, 1]: 53 random bits, never 0 so that ln() is finite.
        ((rng.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    };
    match d {
        Duration::Fixed(ns) => ns,
        Duration::Uniform { low, high } => {
            let (low, high) = (low.min(high), low.max(high));
            let span = u128::from(high - low) + 1;
            low + ((u128::from(rng.next_u64()) * span) >> 64) as u64
        }
        Duration::Normal { mean, sd } => {
            // Box-Muller.
            let (u1, u2) = (unit(rng), unit(rng));
            // libm, not the platform's: the same seed gives the same draw
            // on every machine.
            let z = libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * core::f64::consts::PI * u2);
            libm::round((mean + sd * z).max(0.0)) as u64
        }
        Duration::Exponential { mean } => {
            libm::round((-mean * libm::log(unit(rng))).max(0.0)) as u64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    mod distributions {
        use super::*;

        #[test]
        fn draws_are_seeded_and_have_their_means() {
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            let n = 20_000;
            let mean = |rng: &mut ChaCha8Rng, d| {
                (0..n).map(|_| draw(rng, d)).sum::<u64>() as f64 / n as f64
            };
            let u = mean(
                &mut rng,
                Duration::Uniform {
                    low: 100,
                    high: 300,
                },
            );
            let g = mean(
                &mut rng,
                Duration::Normal {
                    mean: 1000.0,
                    sd: 100.0,
                },
            );
            let e = mean(&mut rng, Duration::Exponential { mean: 500.0 });
            assert!((u - 200.0).abs() < 3.0, "{u}");
            assert!((g - 1000.0).abs() < 5.0, "{g}");
            assert!((e - 500.0).abs() < 15.0, "{e}");
            let mut again = ChaCha8Rng::seed_from_u64(1);
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            assert_eq!(
                draw(&mut rng, Duration::Normal { mean: 5.0, sd: 1.0 }),
                draw(&mut again, Duration::Normal { mean: 5.0, sd: 1.0 })
            );
        }
    }
}
