//! Tests of the report model (R12 tables into `LocationReport`) and, with
//! the `serde` feature, of its JSON form as docs/report.md documents it.
//! They live here rather than beside `core/src/report.rs` because the JSON
//! round trips need `std` (owned strings and vectors), which the kernel's
//! own source never uses.
use heisen_core::location::{Exited, FrameKind};
use heisen_core::merge::Form;
use heisen_core::path::Snapshot;
use heisen_core::report::*;
use heisen_core::stats::{Communicated, Profile};

type Report = LocationReport<2, 4, 4, 2>;

fn profile() -> Profile<4, 4, 2> {
    let mut p = Profile::new();
    p.record_exit(&Exited {
        region: 1,
        site: 10,
        kind: FrameKind::Region,
        folded: false,
        measured_inclusive: 1_000,
        measured_exclusive: 400,
        inclusive: 900,
        exclusive: -20,
    });
    p.record_exit(&Exited {
        region: 5,
        site: 0,
        kind: FrameKind::Loop,
        folded: false,
        measured_inclusive: 700,
        measured_exclusive: 700,
        inclusive: 650,
        exclusive: 650,
    });
    p.record_comm(&Communicated {
        site: 20,
        peer: 3,
        bytes: 4096,
        measured_wait: 300,
        compensated_wait: -15,
        transfer: 120,
        reordered: true,
    });
    p
}

fn values(name: Option<&str>) -> LocationValues<'_, 2> {
    LocationValues {
        location: 3,
        name,
        form: Form::Timestamped,
        start: 1_000,
        approximated_start: 900,
        measured_end: 10_000,
        approximated_end: 9_250,
        delay: 750,
        overhead: 600,
        critical_path: Some(CriticalPath::new(
            9_000,
            120,
            [5_000, 0],
            [3_000, 0],
            [4_000, 9_000],
        )),
        frames_dropped: 1,
        sites_dropped: 0,
        overcompensation: Overcompensation {
            count: 2,
            total: -35,
        },
    }
}

fn report() -> Report {
    Report::from_profile(values(Some("rank 3")), &profile()).expect("fixture report")
}

// --- building -------------------------------------------------------

#[test]
fn from_profile_copies_every_table_with_its_keys() {
    let r = report();
    assert_eq!(r.name.as_ref().map(|n| n.as_str()), Some("rank 3"));
    assert_eq!(
        r.regions.as_slice(),
        &[RegionEntry {
            region: 1,
            site: 10,
            count: 1,
            measured_inclusive: 1_000,
            measured_exclusive: 400,
            inclusive: 900,
            exclusive: -20,
        }]
    );
    assert_eq!(
        r.loops.as_slice(),
        &[LoopEntry {
            id: 5,
            count: 1,
            measured: 700,
            compensated: 650
        }]
    );
    assert_eq!(r.comms.len(), 1);
    assert_eq!(r.comms[0].reorders, 1);
    assert_eq!(r.comms[0].compensated_wait, -15);
    assert_eq!(
        r.overflow,
        OverflowCounts {
            frames: 1,
            ..OverflowCounts::default()
        }
    );
}

#[test]
fn from_profile_carries_table_overflow() {
    let mut p = Profile::<4, 4, 2>::new();
    for id in 0..3 {
        p.record_exit(&Exited {
            region: id,
            site: 0,
            kind: FrameKind::Loop,
            folded: false,
            measured_inclusive: 1,
            measured_exclusive: 1,
            inclusive: 1,
            exclusive: 1,
        });
    }
    let r = Report::from_profile(values(None), &p);
    assert_eq!(r.map(|r| (r.loops.len(), r.overflow.loops)), Ok((2, 1)));
}

#[test]
fn from_profile_rejects_a_long_name() {
    let long = "a location name that is far longer than 32 bytes";
    assert_eq!(
        Report::from_profile(values(Some(long)), &profile()),
        Err(ReportError::NameTooLong)
    );
    assert_eq!(
        truncated::<LOCATION_NAME_LEN>(long).len(),
        LOCATION_NAME_LEN
    );
}

/// Region names: whole up to `REGION_NAME_LEN` (a C++ signature of 100
/// bytes stays readable); longer ones cut with a hash of the whole name,
/// so that two template instances sharing a long prefix stay apart
/// (reports of several processes are merged by name).
#[test]
fn region_names_longer_than_the_capacity_stay_apart() {
    let cpp = "std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(__gnu_cxx::__normal_iterator<int*, std::vector<int> >, int const&)";
    assert!(cpp.len() > 64 && cpp.len() <= REGION_NAME_LEN);
    assert_eq!(region_name(cpp).as_str(), cpp);
    let prefix = "int use<std::tuple<".repeat(20);
    let (a, b) = (
        format!("{prefix}int>(A const*)"),
        format!("{prefix}long>(B const*)"),
    );
    let (na, nb) = (region_name(&a), region_name(&b));
    assert_ne!(na, nb);
    for n in [&na, &nb] {
        assert!(n.len() <= REGION_NAME_LEN, "{}", n.len());
        assert!(n.starts_with("int use<std::tuple<"), "{n}");
        assert!(n.contains("…#"), "{n}");
    }
    assert_eq!(region_name(&a), na, "the same name cuts the same way");
    // A multi-byte character at the cut is not split.
    let wide = "é".repeat(200);
    let n = region_name(&wide);
    assert!(n.len() <= REGION_NAME_LEN && n.starts_with("éé"), "{n}");
}

#[test]
fn truncated_cuts_at_a_character_boundary() {
    // "é" is two bytes; 3 bytes of "aéé" would split the second one.
    assert_eq!(truncated::<4>("aéé").as_str(), "aé");
    assert_eq!(truncated::<8>("short").as_str(), "short");
}

#[test]
fn critical_path_of_inactive_snapshot_is_none() {
    let s = Snapshot::<2>::ZERO;
    assert_eq!(CriticalPath::of_snapshot(&s), None);
    let active = Snapshot {
        active: true,
        longest: 7,
        net: [1, 2],
        ..s
    };
    assert_eq!(
        CriticalPath::of_snapshot(&active).map(|c| (c.longest, c.net)),
        Some((7, heapless::Vec::from_array([1, 2])))
    );
}

#[test]
fn header_selects_up_to_k_regions_and_checks() {
    let mut h = RunHeader::<1>::new("sim", Form::DelayOnly).expect("fixture");
    assert_eq!(h.select(4, "solve"), Ok(()));
    assert_eq!(h.select(5, "io"), Err(ReportError::TooManySelected));
    assert_eq!(h.check(), Ok(()));
    h.version = 2;
    assert_eq!(h.check(), Err(ReportError::UnsupportedVersion(2)));
    h.version = VERSION;
    h.tool = truncated("other");
    assert_eq!(h.check(), Err(ReportError::ForeignTool));
    assert_eq!(
        RunHeader::<1>::new("a backend name too long", Form::DelayOnly),
        Err(ReportError::NameTooLong)
    );
}

#[test]
fn elapsed_times_follow_from_start_end_and_delay() {
    let r = report();
    assert_eq!(r.measured_elapsed(), 10_000 - 1_000);
    assert_eq!(r.compensated_elapsed(), 9_250 - 900);
    assert_eq!(r.local_only_elapsed(), 9_000 - 600);
}

#[test]
fn header_lists_clock_and_calibrated_actions() {
    let mut h = RunHeader::<1>::new("shmem", Form::Timestamped).expect("fixture");
    assert_eq!(h.set_clock("tsc"), Ok(()));
    assert_eq!(h.add_action("enter", 18, 6), Ok(()));
    assert_eq!(h.actions[0].action.as_str(), "enter");
    assert_eq!((h.actions[0].whole, h.actions[0].inside), (18, 6));
    assert_eq!(
        h.add_action(&"x".repeat(ACTION_LEN + 1), 1, 0),
        Err(ReportError::NameTooLong)
    );
    for i in 1..MAX_ACTIONS {
        assert_eq!(h.add_action("a", i as u64, 0), Ok(()));
    }
    assert_eq!(
        h.add_action("one too many", 1, 0),
        Err(ReportError::TooManyActions)
    );
}

// --- JSON (serde) -----------------------------------------------------

#[cfg(feature = "serde")]
mod json {
    use std::string::String as StdString;
    use std::vec::Vec as StdVec;

    use super::*;

    /// How a reader with `std` holds a report file.
    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct OwnedFile {
        header: RunHeader<2>,
        regions: StdVec<RegionName>,
        locations: StdVec<Report>,
    }

    fn to_json<T: serde::Serialize>(value: &T) -> StdString {
        serde_json::to_string(value).expect("serialise")
    }

    #[test]
    fn location_report_round_trips() {
        let r = report();
        let json = to_json(&r);
        let back: Result<Report, _> = serde_json::from_str(&json);
        assert_eq!(back.ok(), Some(r));
    }

    #[test]
    fn location_report_without_name_or_path_round_trips() {
        let r = Report::from_profile(
            LocationValues {
                critical_path: None,
                ..values(None)
            },
            &Profile::new(),
        )
        .expect("fixture");
        let json = to_json(&r);
        assert!(
            json.contains(r#""name":null"#) && json.contains(r#""critical_path":null"#),
            "{json}"
        );
        let back: Result<Report, _> = serde_json::from_str(&json);
        assert_eq!(back.ok(), Some(r));
    }

    #[test]
    fn negative_times_are_written_signed() {
        let json = to_json(&report());
        assert!(json.contains(r#""exclusive":-20"#), "{json}");
        assert!(json.contains(r#""compensated_wait":-15"#), "{json}");
        assert!(
            json.contains(r#""overcompensation":{"count":2,"total":-35}"#),
            "{json}"
        );
    }

    #[test]
    fn report_file_round_trips_through_the_documented_shape() {
        let mut header = RunHeader::<2>::new("sim", Form::Timestamped).expect("fixture");
        assert_eq!(header.select(1, "solve"), Ok(()));
        let regions = [RegionName::new(1, "solve").expect("fixture")];
        let locations = [report()];
        let file = ReportFile {
            header: &header,
            regions: &regions,
            locations: &locations,
        };
        let json = to_json(&file);
        assert!(
            json.starts_with(
                r#"{"header":{"version":1,"tool":"heisen","backend":"sim","form":"timestamped""#
            ),
            "{json}"
        );
        let back: OwnedFile = serde_json::from_str(&json).expect("parse");
        assert_eq!(back.header.check(), Ok(()));
        assert_eq!(
            back,
            OwnedFile {
                header,
                regions: regions.to_vec(),
                locations: locations.to_vec()
            }
        );
    }

    #[test]
    fn header_with_clock_and_calibration_round_trips() {
        let mut header = RunHeader::<2>::new("shmem", Form::Timestamped).expect("fixture");
        header.set_clock("tsc").expect("fixture");
        header.calibration = Some(heisen_core::Calibration {
            send: 30,
            merge: 40,
            ..heisen_core::Calibration::ZERO
        });
        header.add_action("mutex_acquire", 40, 25).expect("fixture");
        let json = to_json(&header);
        let back: RunHeader<2> = serde_json::from_str(&json).expect("parse");
        assert_eq!(back, header);
    }

    #[test]
    fn files_of_older_writers_read_with_defaults() {
        // Written before `start`, `clock`, `calibration` and `actions` existed.
        let header =
            r#"{"version":1,"tool":"heisen","backend":"sim","form":"timestamped","selected":[]}"#;
        let h: RunHeader<2> = serde_json::from_str(header).expect("parse");
        assert_eq!((h.clock, h.calibration, h.actions.len()), (None, None, 0));
        let json = to_json(&report())
            .replacen(r#""start":1000,"approximated_start":900,"#, "", 1)
            .replacen(r#""overhead":600,"#, "", 1);
        let r: Report = serde_json::from_str(&json).expect("parse");
        assert_eq!((r.start, r.approximated_start, r.overhead), (0, 0, 0));
        assert_eq!(r.measured_elapsed(), 10_000);
    }

    #[test]
    fn docs_example_parses_and_is_consistent() {
        // docs/report.md's example is a real report of these types.
        let doc = include_str!("../../docs/report.md");
        let start = doc
            .find("```json\n")
            .map(|i| i + "```json\n".len())
            .expect("json block");
        let len = doc[start..].find("\n```").expect("end of json block");
        let file: OwnedFile = serde_json::from_str(&doc[start..start + len]).expect("parse");
        assert_eq!(file.header.check(), Ok(()));
        for l in &file.locations {
            assert_eq!(l.approximated_end, l.measured_end as i64 - l.delay as i64);
            let path = l.critical_path.as_ref().expect("example has a path");
            for k in 0..file.header.selected.len() {
                assert!(path.exclusive[k] <= path.inclusive[k]);
                assert!(
                    path.longest - path.inclusive[k] <= path.net[k] && path.net[k] <= path.longest
                );
            }
        }
    }

    #[test]
    fn truncated_json_is_an_error() {
        let json = to_json(&report());
        for cut in [0, 1, json.len() / 2, json.len() - 1] {
            let back: Result<Report, _> = serde_json::from_str(&json[..cut]);
            assert!(back.is_err(), "cut at {cut} parsed");
        }
    }

    #[test]
    fn malformed_json_is_an_error() {
        let json = to_json(&report());
        let cases = [
            json.replacen(r#""delay":750"#, r#""delay":-750"#, 1), // u64 field negative
            json.replacen(r#""location":3"#, r#""location":"3""#, 1), // wrong type
            json.replacen(r#""form":"timestamped""#, r#""form":"Sometimes""#, 1), // unknown variant
            json.replacen(r#""net":[4000,9000]"#, r#""net":[4000,9000,1]"#, 1), // more than K shares
            json.replacen(
                r#""name":"rank 3""#,
                r#""name":"a location name that is far longer than 32 bytes""#,
                1,
            ),
            json.replacen(r#""measured_end":10000,"#, "", 1), // missing field
            StdString::from("[]"),
            StdString::from("null"),
        ];
        for case in &cases {
            assert_ne!(case, &json, "fixture did not change");
            let back: Result<Report, _> = serde_json::from_str(case);
            assert!(back.is_err(), "parsed: {case}");
        }
    }
}
