//! Writes a simulated run as a report file in the core's report format
//! (`docs/report.md`): `{"header", "regions", "locations"}`, one
//! `LocationReport` per location from the timestamped kernel.

use heisen_core::Form;
use heisen_core::report::{RegionName, ReportFile, RunHeader, region_name};

use crate::engine::{RunResult, SELECTED};
use crate::program::Program;

/// The report of `run` (a run of `program` with kernels) as pretty JSON.
/// Region names longer than the format's 256 bytes are shortened
/// (`report::region_name`).
pub fn report_json(program: &Program, run: &RunResult) -> Result<String, String> {
    let locations = run
        .reports
        .as_ref()
        .ok_or("the run has no kernel reports (it ran without kernels)")?;
    let mut header = RunHeader::<SELECTED>::new("sim", Form::Timestamped)
        .map_err(|e| format!("report header: {e}"))?;
    header
        .set_clock("simulated")
        .map_err(|e| format!("report header: {e}"))?;
    // The measured run charged the program's calibrated costs (R1).
    header.calibration = Some(program.calibration);
    let names: Vec<RegionName> = program
        .regions
        .iter()
        .enumerate()
        .map(|(id, name)| RegionName {
            id: id as u32,
            name: region_name(name),
        })
        .collect();
    for r in names.iter().take(SELECTED) {
        header
            .select(r.id, r.name.as_str())
            .map_err(|e| format!("selected region {}: {e}", r.name))?;
    }
    let file = ReportFile {
        header: &header,
        regions: &names,
        locations,
    };
    serde_json::to_string_pretty(&file)
        .map(|mut s| {
            s.push('\n');
            s
        })
        .map_err(|e| format!("cannot write the report: {e}"))
}
