//! What the `heisen` CLI writes and reads besides its tables: the report
//! file (JSON, core format), Chrome trace-event timelines, SVG timelines,
//! the renderer of any report file, and the reader of a running
//! program's live monitor table.

pub mod json;
pub mod monitor;
pub mod report;
pub mod svg;
pub mod trace;
pub mod units;
