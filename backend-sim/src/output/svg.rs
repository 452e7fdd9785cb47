//! Draws a run's measured and approximated timelines one above the other
//! as a plain SVG picture, in the manner of seed 001 Fig. 3: a lane per
//! location, region boxes, instrumentation overhead, waits, and message
//! arrows, on one time axis so that the two runs can be compared by eye.

use core::fmt::Write as _;

use crate::engine::RunResult;
use crate::output::trace::{Timeline, timeline};
use crate::program::Program;

/// Most locations drawn; larger runs draw the first ones and say so.
pub const MAX_LANES: usize = 64;
/// Most boxes and arrows drawn per timeline. Beyond it the picture is
/// thinned evenly over the whole run (never by dropping its end): first,
/// of the shapes narrower than half a pixel, one per lane, kind and
/// half-pixel is kept (what the eye sees anyway); then, if still too
/// many, every k-th shape in time order. The picture says so.
pub const MAX_SHAPES: usize = 50_000;
/// Height of the legend under the axis.
const LEGEND: f64 = 44.0;

const WIDTH: f64 = 1200.0;
const LEFT: f64 = 120.0;
const RIGHT: f64 = 20.0;
const LANE: f64 = 28.0;
const TITLE: f64 = 28.0;
const GAP: f64 = 36.0;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn colour(region: u32) -> String {
    format!("hsl({}, 60%, 70%)", (region * 67 + 200) % 360)
}

/// A round step of about `span / 8` for the time axis.
fn tick_step(span: f64) -> f64 {
    let raw = (span / 8.0).max(1.0);
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude)
}

/// The SVG picture of `run` (kept with a trace and kernels).
pub fn timelines_svg(program: &Program, run: &RunResult) -> Result<String, String> {
    let measured = timeline(program, run, false)?;
    let approximated = timeline(program, run, true)?;
    let lanes = program.locations.len().min(MAX_LANES);
    let end = measured.end.max(approximated.end).max(1) as f64;
    let scale = (WIDTH - LEFT - RIGHT) / end;
    let x = |t: i64| LEFT + t.max(0) as f64 * scale;
    let panel = TITLE + lanes as f64 * LANE + 24.0;
    let height = 2.0 * panel + GAP + 30.0 + LEGEND;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height:.0}\" \
         viewBox=\"0 0 {WIDTH} {height:.0}\" font-family=\"sans-serif\" font-size=\"11\">"
    );
    let _ = writeln!(
        out,
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"6\" \
         markerHeight=\"6\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#333\"/></marker></defs>"
    );
    let _ = writeln!(out, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
    let panels = [
        ("measured (with instrumentation overhead)", &measured, 0.0),
        (
            "approximated (heisen's timestamped compensation, R5)",
            &approximated,
            panel + GAP,
        ),
    ];
    for (title, t, top) in panels {
        draw_panel(&mut out, program, title, t, top, lanes, &x);
    }
    // Time axis under the second panel.
    let axis = 2.0 * panel + GAP;
    let step = tick_step(end);
    let _ = writeln!(
        out,
        "<line x1=\"{LEFT}\" y1=\"{axis:.1}\" x2=\"{:.1}\" y2=\"{axis:.1}\" stroke=\"#333\"/>",
        WIDTH - RIGHT
    );
    let unit = super::units::Unit::for_max(end as i64);
    let mut tick = 0.0;
    while tick <= end {
        let tx = LEFT + tick * scale;
        let _ = writeln!(
            out,
            "<line x1=\"{tx:.1}\" y1=\"{axis:.1}\" x2=\"{tx:.1}\" y2=\"{:.1}\" stroke=\"#333\"/>\
             <text x=\"{tx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{} {}</text>",
            axis + 4.0,
            axis + 16.0,
            unit.fmt(tick as i64)
                .trim_end_matches('0')
                .trim_end_matches('.'),
            unit.name()
        );
        tick += step;
    }
    if program.locations.len() > lanes {
        let _ = writeln!(
            out,
            "<text x=\"{LEFT}\" y=\"{:.1}\" fill=\"#a00\">only the first {lanes} of {} locations are drawn</text>",
            axis + 28.0,
            program.locations.len()
        );
    }
    draw_legend(&mut out, program, axis + 36.0);
    out.push_str("</svg>\n");
    Ok(out)
}

// Long: one panel drawn in order (lanes, spans, arrows, axis); the steps share the scale closures.
fn draw_panel(
    out: &mut String,
    program: &Program,
    title: &str,
    t: &Timeline,
    top: f64,
    lanes: usize,
    x: &impl Fn(i64) -> f64,
) {
    let _ = writeln!(
        out,
        "<text x=\"8\" y=\"{:.1}\" font-size=\"14\" font-weight=\"bold\">{}</text>",
        top + 18.0,
        escape(title)
    );
    let lane_top = |l: u32| top + TITLE + f64::from(l) * LANE;
    for (i, loc) in program.locations.iter().take(lanes).enumerate() {
        let y = lane_top(i as u32);
        let _ = writeln!(
            out,
            "<text x=\"8\" y=\"{:.1}\">{}</text><line x1=\"{LEFT}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#ccc\"/>",
            y + LANE / 2.0 + 4.0,
            escape(&loc.name),
            y + LANE / 2.0,
            WIDTH - RIGHT,
            y + LANE / 2.0
        );
    }
    let keep = thin(t, lanes, x);
    let mut shown = keep.iter().filter(|k| **k).count();
    let mut k = keep.iter();
    for s in &t.spans {
        if !*k.next().unwrap_or(&false) {
            continue;
        }
        let y = lane_top(s.location);
        let (x0, x1) = (x(s.begin), x(s.end));
        let w = (x1 - x0).max(0.5);
        match s.category {
            "region" => {
                let inset = (s.depth as f64 * 3.0).min(9.0);
                let _ = writeln!(
                    out,
                    "<rect x=\"{x0:.2}\" y=\"{:.1}\" width=\"{w:.2}\" height=\"{:.1}\" fill=\"{}\" stroke=\"#555\" stroke-width=\"0.3\"><title>{} {:.3}–{:.3} µs</title></rect>",
                    y + 3.0 + inset,
                    LANE - 6.0 - 2.0 * inset,
                    colour(s.region.unwrap_or(0)),
                    escape(&s.name),
                    s.begin as f64 / 1000.0,
                    s.end as f64 / 1000.0
                );
                if w > 8.0 * s.name.len() as f64 && s.depth == 0 {
                    let _ = writeln!(
                        out,
                        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"9\">{}</text>",
                        x0 + 2.0,
                        y + 12.0,
                        escape(&s.name)
                    );
                }
            }
            "overhead" => {
                let _ = writeln!(
                    out,
                    "<rect x=\"{x0:.2}\" y=\"{:.1}\" width=\"{w:.2}\" height=\"5\" fill=\"#b22\"/>",
                    y + LANE - 6.0
                );
            }
            "wait" => {
                let _ = writeln!(
                    out,
                    "<line x1=\"{x0:.2}\" y1=\"{:.1}\" x2=\"{x1:.2}\" y2=\"{:.1}\" stroke=\"#888\" stroke-width=\"3\" stroke-dasharray=\"3,2\"/>",
                    y + LANE / 2.0,
                    y + LANE / 2.0
                );
            }
            _ => shown -= 1,
        }
    }
    for a in &t.arrows {
        if !*k.next().unwrap_or(&false) {
            continue;
        }
        let (y0, y1) = (lane_top(a.from) + LANE / 2.0, lane_top(a.to) + LANE / 2.0);
        let _ = writeln!(
            out,
            "<line x1=\"{:.2}\" y1=\"{y0:.1}\" x2=\"{:.2}\" y2=\"{y1:.1}\" stroke=\"#333\" stroke-width=\"0.8\" marker-end=\"url(#arrow)\"/>",
            x(a.begin),
            x(a.end)
        );
    }
    let total = drawable(t, lanes);
    if shown < total {
        let _ = writeln!(
            out,
            "<text x=\"{LEFT}\" y=\"{:.1}\" fill=\"#a00\">{shown} of {total} shapes drawn, thinned evenly over the whole run (shapes narrower than a pixel merged, then every k-th)</text>",
            top + TITLE + lanes as f64 * LANE + 14.0
        );
    }
}

/// Whether a span is drawn at all (its kind and lane).
fn drawable_span(s: &super::trace::Span, lanes: usize) -> bool {
    (s.location as usize) < lanes && matches!(s.category, "region" | "overhead" | "wait")
}

/// Whether an arrow is drawn at all (both lanes shown).
fn drawable_arrow(a: &super::trace::Arrow, lanes: usize) -> bool {
    (a.from as usize) < lanes && (a.to as usize) < lanes
}

/// The shapes that could be drawn, before thinning.
fn drawable(t: &Timeline, lanes: usize) -> usize {
    t.spans.iter().filter(|s| drawable_span(s, lanes)).count()
        + t.arrows.iter().filter(|a| drawable_arrow(a, lanes)).count()
}

/// Which shapes (spans, then arrows, index for index) are drawn: every
/// drawable one up to [`MAX_SHAPES`]; beyond, thinned evenly over the run.
fn thin(t: &Timeline, lanes: usize, x: &impl Fn(i64) -> f64) -> Vec<bool> {
    let mut keep: Vec<bool> = t
        .spans
        .iter()
        .map(|s| drawable_span(s, lanes))
        .chain(t.arrows.iter().map(|a| drawable_arrow(a, lanes)))
        .collect();
    let count = |keep: &[bool]| keep.iter().filter(|k| **k).count();
    if count(&keep) <= MAX_SHAPES {
        return keep;
    }
    // 1. Shapes narrower than half a pixel: one per lane, kind, depth and
    // half-pixel column.
    let mut seen = std::collections::HashSet::new();
    let spans = t.spans.len();
    for (i, k) in keep.iter_mut().enumerate() {
        if !*k {
            continue;
        }
        let key = if i < spans {
            let s = &t.spans[i];
            let (x0, x1) = (x(s.begin), x(s.end));
            if x1 - x0 >= 0.5 {
                continue;
            }
            (s.location, s.category, s.depth as u32, (x0 * 2.0) as i64, 0)
        } else {
            let a = &t.arrows[i - spans];
            (
                a.from,
                "arrow",
                a.to,
                (x(a.begin) * 2.0) as i64,
                (x(a.end) * 2.0) as i64,
            )
        };
        if !seen.insert(key) {
            *k = false;
        }
    }
    // 2. Every k-th of the rest, in time order, so that the whole run
    // keeps the same density.
    let left = count(&keep);
    if left > MAX_SHAPES {
        let mut order: Vec<(i64, usize)> = keep
            .iter()
            .enumerate()
            .filter(|(_, k)| **k)
            .map(|(i, _)| {
                let begin = if i < spans {
                    t.spans[i].begin
                } else {
                    t.arrows[i - spans].begin
                };
                (begin, i)
            })
            .collect();
        order.sort_unstable();
        let stride = left.div_ceil(MAX_SHAPES);
        for (n, (_, i)) in order.into_iter().enumerate() {
            if n % stride != 0 {
                keep[i] = false;
            }
        }
    }
    keep
}

/// What the colours and marks mean: a swatch per region (the first 12),
/// then overhead, waiting and messages.
fn draw_legend(out: &mut String, program: &Program, y: f64) {
    let _ = writeln!(
        out,
        "<text x=\"8\" y=\"{:.1}\" font-weight=\"bold\">legend</text>",
        y + 9.0
    );
    // One item: its mark drawn at `at` by `mark`, its label after it.
    fn item(out: &mut String, at: &mut f64, y: f64, mark: String, label: &str) {
        let _ = writeln!(
            out,
            "{mark}<text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            *at + 22.0,
            y + 9.0,
            escape(label)
        );
        *at += 30.0 + 6.5 * label.chars().count() as f64;
    }
    let mut at = LEFT;
    for (k, name) in program.regions.iter().enumerate().take(12) {
        let mark = format!(
            "<rect x=\"{at:.1}\" y=\"{y:.1}\" width=\"18\" height=\"10\" fill=\"{}\" stroke=\"#555\" stroke-width=\"0.3\"/>",
            colour(k as u32)
        );
        item(out, &mut at, y, mark, &format!("region {name}"));
    }
    let y = y + 18.0;
    at = LEFT;
    let mark = format!(
        "<rect x=\"{at:.1}\" y=\"{:.1}\" width=\"18\" height=\"5\" fill=\"#b22\"/>",
        y + 3.0
    );
    item(
        out,
        &mut at,
        y,
        mark,
        "instrumentation overhead (measured run only)",
    );
    let mark = format!(
        "<line x1=\"{at:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#888\" stroke-width=\"3\" stroke-dasharray=\"3,2\"/>",
        y + 5.0,
        at + 18.0,
        y + 5.0
    );
    item(out, &mut at, y, mark, "waiting (a merge)");
    let mark = format!(
        "<line x1=\"{at:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#333\" stroke-width=\"0.8\" marker-end=\"url(#arrow)\"/>",
        y + 5.0,
        at + 18.0,
        y + 5.0
    );
    item(
        out,
        &mut at,
        y,
        mark,
        "message or dependency, release to satisfaction",
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::trace::{Arrow, Span};

    /// `n` back-to-back waits of 10 ns on each of `lanes` lanes, and a
    /// message every 100 ns from lane 0 to lane 1.
    fn busy(n: usize, lanes: u32) -> Timeline {
        let mut t = Timeline::default();
        for l in 0..lanes {
            for i in 0..n {
                t.spans.push(Span {
                    location: l,
                    name: "wait".into(),
                    category: "wait",
                    region: None,
                    depth: 0,
                    begin: 10 * i as i64,
                    end: 10 * i as i64 + 10,
                });
            }
        }
        for i in 0..n / 10 {
            t.arrows.push(Arrow {
                from: 0,
                begin: 100 * i as i64,
                to: 1,
                end: 100 * i as i64 + 50,
            });
        }
        t.end = 10 * n as i64;
        t
    }

    #[test]
    fn thinning_keeps_the_whole_run_evenly() {
        let t = busy(200_000, 2);
        let scale = (WIDTH - LEFT - RIGHT) / t.end as f64;
        let x = |v: i64| LEFT + v as f64 * scale;
        let keep = thin(&t, 2, &x);
        let kept: Vec<i64> = t
            .spans
            .iter()
            .map(|s| s.begin)
            .chain(t.arrows.iter().map(|a| a.begin))
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|(b, _)| b)
            .collect();
        assert!(
            !kept.is_empty() && kept.len() <= MAX_SHAPES,
            "{}",
            kept.len()
        );
        // Every tenth of the run keeps about a tenth of the shapes: none
        // is cut off (the old cap dropped the end).
        for d in 0..10 {
            let (lo, hi) = (t.end * d / 10, t.end * (d + 1) / 10);
            let n = kept.iter().filter(|&&b| b >= lo && b < hi).count();
            let share = n as f64 / kept.len() as f64;
            assert!((0.08..=0.12).contains(&share), "tenth {d}: {share}");
        }
        // Below the cap nothing is thinned.
        let small = busy(100, 2);
        assert!(thin(&small, 2, &x).iter().all(|k| *k));
    }
}
