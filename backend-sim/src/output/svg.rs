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
/// Most boxes and arrows drawn per timeline; the rest are left out and the
/// picture says so.
pub const MAX_SHAPES: usize = 50_000;

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
    let height = 2.0 * panel + GAP + 30.0;
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
    let mut tick = 0.0;
    while tick <= end {
        let tx = LEFT + tick * scale;
        let _ = writeln!(
            out,
            "<line x1=\"{tx:.1}\" y1=\"{axis:.1}\" x2=\"{tx:.1}\" y2=\"{:.1}\" stroke=\"#333\"/>\
             <text x=\"{tx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{} µs</text>",
            axis + 4.0,
            axis + 16.0,
            tick / 1000.0
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
    out.push_str("</svg>\n");
    Ok(out)
}

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
    let mut drawn = 0;
    let mut left_out = 0;
    for s in &t.spans {
        if s.location as usize >= lanes {
            continue;
        }
        if drawn >= MAX_SHAPES {
            left_out += 1;
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
            _ => continue,
        }
        drawn += 1;
    }
    for a in &t.arrows {
        if a.from as usize >= lanes || a.to as usize >= lanes {
            continue;
        }
        if drawn >= MAX_SHAPES {
            left_out += 1;
            continue;
        }
        let (y0, y1) = (lane_top(a.from) + LANE / 2.0, lane_top(a.to) + LANE / 2.0);
        let _ = writeln!(
            out,
            "<line x1=\"{:.2}\" y1=\"{y0:.1}\" x2=\"{:.2}\" y2=\"{y1:.1}\" stroke=\"#333\" stroke-width=\"0.8\" marker-end=\"url(#arrow)\"/>",
            x(a.begin),
            x(a.end)
        );
        drawn += 1;
    }
    if left_out > 0 {
        let _ = writeln!(
            out,
            "<text x=\"{LEFT}\" y=\"{:.1}\" fill=\"#a00\">{left_out} more shapes left out</text>",
            top + TITLE + lanes as f64 * LANE + 14.0
        );
    }
}
