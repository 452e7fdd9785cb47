//! What the `heisen` CLI writes and reads besides its tables: the report
//! file (JSON, core format), Chrome trace-event timelines, SVG timelines,
//! and the renderer of any report file.

pub mod json;
pub mod report;
pub mod svg;
pub mod trace;
