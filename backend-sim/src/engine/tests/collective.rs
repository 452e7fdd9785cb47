//! Collectives through the whole engine (R6).

use heisen_core::{Calibration, Cost};

use super::FREE;
use crate::compare::compare;
use crate::program::{Collective, ProgramBuilder};

#[test]
fn gather_root_measures_each_transfer_from_its_own_arrival() {
    // R5 with several dependencies: r1 contributes at 1000 with
    // x = 0, r2 at 2100 with x = 100 (truth 2000); the gather costs
    // 2 rounds of the 500 ns latency. Truth: e = 3000; measured
    // 3100. Each dependency's transfer is measured from its own
    // arrival (Dependency::arrived): r1's a_j + l_j = 2000, r2's
    // 3000, so the timestamped form is exact. The delay-only form
    // only knows e - x_j and stays an upper bound (R4): 3100.
    let mut b = ProgramBuilder::new("gather");
    let f = b.region("f");
    b.network(FREE).calibration(Calibration {
        enter: Cost {
            whole: 100,
            inside: 0,
        },
        ..Calibration::ZERO
    });
    let (r0, r1, r2) = (b.rank("r0"), b.rank("r1"), b.rank("r2"));
    b.on(r0).collective(Collective::Gather, r0, 0);
    b.on(r1).compute(1000).collective(Collective::Gather, r0, 0);
    b.on(r2)
        .region(f, |b| {
            b.compute(2000);
        })
        .collective(Collective::Gather, r0, 0);
    let c = compare(&b.build().unwrap()).unwrap();
    let root = &c.rows[0];
    assert_eq!((root.truth, root.measured), (3000, 3100));
    assert_eq!((root.timestamped, root.delay_only), (3000, 3100));
}
