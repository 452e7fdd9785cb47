//! The worked example of `docs/piggyback.md` is real: the record below
//! encodes to exactly the hex dump printed there, and decodes back.

use heisen_core::{DecodeError, Flags, Piggyback};

/// The K = 1 record of the worked example.
fn example() -> Piggyback<1> {
    Piggyback {
        flags: Flags::ALL,
        location: 3,
        delay: 480,
        approximated: 1_000_000,
        longest: 750_000,
        transfer: 2_500,
        inclusive: [300_000],
        exclusive: [120_000],
        net: [450_000],
    }
}

/// `xxd`-style lines: offset, then 16 bytes in groups of two.
fn hex_dump(bytes: &[u8]) -> Vec<String> {
    bytes
        .chunks(16)
        .enumerate()
        .map(|(row, chunk)| {
            let groups: Vec<String> = chunk
                .chunks(2)
                .map(|pair| pair.iter().map(|b| format!("{b:02x}")).collect())
                .collect();
            format!("{:08x}: {}", row * 16, groups.join(" "))
        })
        .collect()
}

#[test]
fn the_documented_k1_example_is_what_encode_writes() {
    let mut buffer = [0u8; Piggyback::<1>::ENCODED_LEN];
    assert_eq!(example().encode(&mut buffer), Ok(72));
    assert_eq!(Piggyback::<1>::decode(&buffer), Ok(example()));

    let doc = include_str!("../../docs/piggyback.md");
    let dump = hex_dump(&buffer);
    for line in &dump {
        assert!(
            doc.contains(line.as_str()),
            "docs/piggyback.md lacks the line\n{line}\nof the dump\n{}",
            dump.join("\n")
        );
    }
}

#[test]
fn decode_errors_come_in_the_documented_order() {
    let mut buffer = [0u8; Piggyback::<1>::ENCODED_LEN];
    example().encode(&mut buffer).expect("72 bytes fit");
    let short = |got| Err(DecodeError::Short { needed: 72, got });

    // A truncated record is Short at every length.
    for len in 0..buffer.len() {
        assert_eq!(Piggyback::<1>::decode(&buffer[..len]), short(len));
    }
    // Under 16 bytes, Short whatever the bytes are.
    assert_eq!(Piggyback::<1>::decode(b"XXXXXXXX"), short(8));
    // From 16 bytes on, the header is judged first.
    let mut foreign = buffer;
    foreign[0] = b'X';
    assert_eq!(
        Piggyback::<1>::decode(&foreign[..16]),
        Err(DecodeError::Foreign { found: *b"XB" })
    );
    let mut version = buffer;
    version[2] = 2;
    assert_eq!(
        Piggyback::<1>::decode(&version[..16]),
        Err(DecodeError::Version {
            found: 2,
            expected: 1
        })
    );
    assert_eq!(
        Piggyback::<4>::decode(&buffer[..16]),
        Err(DecodeError::WrongK {
            found: 1,
            expected: 4
        })
    );
    // Reserved flag bits and the reserved word make the bytes foreign.
    let mut reserved_flag = buffer;
    reserved_flag[4] |= 1 << 3;
    assert_eq!(
        Piggyback::<1>::decode(&reserved_flag),
        Err(DecodeError::Foreign { found: *b"HB" })
    );
    let mut reserved_word = buffer;
    reserved_word[15] = 1;
    assert_eq!(
        Piggyback::<1>::decode(&reserved_word),
        Err(DecodeError::Foreign { found: *b"HB" })
    );
    // Bytes after the record are ignored.
    let mut longer = [0xaa_u8; 100];
    longer[..72].copy_from_slice(&buffer);
    assert_eq!(Piggyback::<1>::decode(&longer), Ok(example()));
    // The empty record has no flags and nobody's location.
    let mut empty = [0u8; Piggyback::<1>::ENCODED_LEN];
    Piggyback::<1>::EMPTY
        .encode(&mut empty)
        .expect("72 bytes fit");
    assert_eq!(&empty[4..12], &[0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
}
