//! The port against g++ 12.2's libstdc++: `vectors.txt` (written by
//! `gen.cpp` beside it) holds keys and the order in which `std::sort`
//! and `std::partial_sort` over the whole range (the heap sort of the
//! depth limit) leave them, comparing keys only, so that the order of
//! equal keys is libstdc++'s.

use super::*;

fn cases() -> impl Iterator<Item = (&'static str, Vec<u32>, Vec<u32>)> {
    include_str!("vectors.txt").lines().map(|line| {
        let (what, rest) = line.split_once(' ').unwrap();
        let (keys, ids) = rest.split_once(':').unwrap();
        let nums =
            |s: &str| -> Vec<u32> { s.split_whitespace().map(|x| x.parse().unwrap()).collect() };
        (what, nums(keys), nums(ids))
    })
}

#[test]
fn equal_keys_end_where_libstdcxx_leaves_them() {
    let less = |a: &(u32, u32), b: &(u32, u32)| a.0 < b.0;
    let mut n = (0, 0);
    for (what, keys, expected) in cases() {
        let mut v: Vec<(u32, u32)> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| (k, i as u32))
            .collect();
        if what == "sort" {
            sort(&mut v, &less);
            n.0 += 1;
        } else {
            let len = v.len();
            make_heap(&mut v, 0, len, &less);
            sort_heap(&mut v, 0, len, &less);
            n.1 += 1;
        }
        let got: Vec<u32> = v.iter().map(|e| e.1).collect();
        assert_eq!(got, expected, "{what} of {keys:?}");
    }
    assert_eq!(n, (245, 245));
}

#[test]
fn above_sixteen_equal_kinds_are_scrambled() {
    // 17 sends then 1 receive: not stable (A1), as LogGOPSim's scatter.
    let mut v: Vec<(u32, u32)> = (0..17).map(|i| (1, i)).chain([(2, 17)]).collect();
    sort(&mut v, &|a: &(u32, u32), b: &(u32, u32)| a.0 < b.0);
    let ids: Vec<u32> = v.iter().map(|e| e.1).collect();
    assert_ne!(ids, (0..18).collect::<Vec<_>>());
    assert_eq!(v[17], (2, 17));
}
