//! `Location::restart`: a backend's set-up that ran on a location before
//! the program's first event (an MPI rank's start-up) is forgotten, the
//! location's configuration kept.

use heisen_core::{Calibration, Config, Cost, Form, Location, RestartError};

type Loc = Location<2, 8>;

fn location() -> Loc {
    let mut config = Config::new(4096, [1, 3]);
    config.form = Form::DelayOnly;
    config.calibration = Calibration {
        enter: Cost::whole(7),
        send: 11,
        ..Calibration::ZERO
    };
    Location::new(config, 100)
}

#[test]
fn a_restart_forgets_the_set_up_and_keeps_the_configuration() {
    let mut l = location();
    l.on_overhead(40_000); // a calibration pause (R1)
    l.on_enter(1, 0, 1_000).expect("enter");
    l.on_exit(1, 2_000).expect("exit");
    assert!(l.delay() > 40_000 && l.overhead() > 40_000);
    assert_eq!(l.restart(50_000), Ok(()));
    assert_eq!((l.delay(), l.overhead()), (0, 0));
    assert_eq!(l.last_measured(), 50_000);
    assert_eq!(l.last_approximated(), 50_000);
    assert_eq!(l.snapshot().longest, 0);
    assert_eq!(l.id(), 4096);
    assert_eq!(l.form(), Form::DelayOnly);
    assert_eq!(l.calibration().send, 11);
    assert_eq!(l.slot_of(3), Some(1));
    // The restarted location measures as a new one would.
    let mut fresh = location();
    assert_eq!(fresh.restart(50_000), Ok(()));
    for loc in [&mut l, &mut fresh] {
        loc.on_enter(3, 0, 60_000).expect("enter");
        loc.on_exit(3, 70_000).expect("exit");
    }
    assert_eq!(l.snapshot(), fresh.snapshot());
    assert_eq!(l.delay(), fresh.delay());
}

#[test]
fn a_restart_is_refused_with_a_region_open_or_back_in_time() {
    let mut l = location();
    l.on_enter(1, 0, 1_000).expect("enter");
    assert_eq!(
        l.restart(5_000),
        Err(RestartError::RegionsOpen { depth: 1 })
    );
    assert_eq!(l.depth(), 1);
    l.on_exit(1, 2_000).expect("exit");
    assert_eq!(
        l.restart(1_500),
        Err(RestartError::TimeWentBackwards {
            previous: 2_000,
            now: 1_500
        }),
        "earlier than the last event"
    );
    assert_eq!(l.restart(2_000), Ok(()));
}
