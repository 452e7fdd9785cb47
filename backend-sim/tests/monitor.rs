//! `heisen monitor` against a program that is running: the test starts
//! itself again as a child measured by the real process runtime with
//! HEISEN_MONITOR=1; the child works in two regions, publishes, says it is
//! ready on stdout and blocks reading its stdin. The test runs `heisen
//! monitor --once` on it (by pid and by path) and a refreshing `heisen
//! monitor`, then closes the child's stdin so that it exits, and the
//! refreshing monitor stops by itself once the child is reaped. No sleeps
//! in the test: the pipes are the handshake.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// Set in the child.
const CHILD: &str = "HEISEN_TEST_MONITOR_CHILD";

/// What the child prints once it published.
const READY: &str = "monitor child ready, pid ";

/// Work the optimiser cannot remove.
fn spin(n: u64) -> u64 {
    (0..n).fold(0u64, |a, i| core::hint::black_box(a.wrapping_add(i * i)))
}

/// The measured program: `solve` around `exchange`, a release (which
/// publishes), then it waits for the test.
fn run_child() {
    let rt = heisen_shmem::runtime();
    let _solve = heisen_shmem::region("solve");
    spin(50_000);
    heisen_shmem::in_region("exchange", || spin(20_000));
    heisen_shmem::with_current(|s| s.release(rt.builtin().release))
        .expect("the main thread is measured");
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "\n{READY}{}", std::process::id()).expect("stdout");
    stdout.flush().expect("stdout");
    drop(stdout);
    let mut rest = String::new();
    let _ = std::io::stdin().read_to_string(&mut rest); // until the test closes it
}

fn heisen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_heisen"))
        .args(args)
        .output()
        .expect("the heisen binary runs")
}

fn check_reading(o: &Output, pid: &str) -> String {
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.starts_with(&format!("heisen monitor: pid {pid}, 1 locations (0 ended)")),
        "{out}"
    );
    let path = out
        .lines()
        .find_map(|l| l.strip_prefix("critical path: "))
        .unwrap_or_else(|| panic!("a critical path: {out}"));
    let longest: f64 = path
        .split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{path}"));
    assert!(longest > 0.0, "{out}");
    assert!(path.contains("ending at location 0;"), "{out}");
    for region in ["solve", "exchange"] {
        let row: Vec<&str> = out
            .lines()
            .find(|l| l.split_whitespace().next() == Some(region))
            .unwrap_or_else(|| panic!("a row for {region}: {out}"))
            .split_whitespace()
            .collect();
        let share: f64 = row[1].parse().expect("a share in µs");
        assert!(share > 0.0 && share <= longest, "{row:?}\n{out}");
    }
    out
}

#[test]
fn monitor_once_shows_the_live_critical_path_of_a_running_program() {
    if std::env::var_os(CHILD).is_some() {
        run_child();
        return;
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("monitor-child");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("output directory");
    let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
    cmd.args([
        "monitor_once_shows_the_live_critical_path_of_a_running_program",
        "--exact",
        "--nocapture",
        "--test-threads=1",
    ]);
    for var in [
        "HEISEN_REGIONS",
        "HEISEN_SUMMARY",
        "HEISEN_DISABLE",
        "HEISEN_FORM",
    ] {
        cmd.env_remove(var);
    }
    let mut child = cmd
        .env(CHILD, "1")
        .env("HEISEN_MONITOR", "1")
        .env("HEISEN_OUTPUT", &dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the child");
    let mut lines = BufReader::new(child.stdout.take().expect("piped"))
        .lines()
        .map_while(Result::ok);
    let pid = lines
        .find_map(|l| l.strip_prefix(READY).map(String::from))
        .expect("the child says it is ready");
    assert_eq!(pid, child.id().to_string());

    let by_pid = check_reading(&heisen(&["monitor", "--once", &pid]), &pid);
    let table = format!("/dev/shm/heisen.{pid}.monitor");
    let by_path = check_reading(&heisen(&["monitor", "--once", &table]), &pid);
    // The program did nothing in between: the same reading.
    assert_eq!(by_pid, by_path);

    // Refreshing: the monitor runs until the program is gone.
    let mut watcher = Command::new(env!("CARGO_BIN_EXE_heisen"))
        .args(["monitor", "--interval", "0.01", &pid])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("heisen monitor starts");
    let mut watched = BufReader::new(watcher.stdout.take().expect("piped"));
    let mut first = String::new();
    watched.read_line(&mut first).expect("a first reading");
    while first.trim().is_empty() {
        first.clear();
        watched.read_line(&mut first).expect("a first reading");
    }
    assert!(first.starts_with("heisen monitor: pid "), "{first}");

    drop(child.stdin.take()); // the child reads EOF and exits
    let rest: Vec<String> = lines.collect(); // its test harness's last lines
    let out = child.wait_with_output().expect("the child ends");
    assert!(out.status.success(), "{out:?}\n{rest:?}");
    assert!(
        !std::path::Path::new(&table).exists(),
        "the table goes with the program"
    );
    // Reaped: the monitor prints the last samples and stops by itself.
    let mut tail = String::new();
    watched
        .read_to_string(&mut tail)
        .expect("the monitor's output");
    let status = watcher.wait().expect("the monitor ends");
    assert!(status.success(), "{tail}");
    let last = tail
        .rsplit("heisen monitor: ")
        .next()
        .unwrap_or_else(|| panic!("{tail}"));
    assert!(
        last.contains("1 locations (1 ended)")
            && last.ends_with(&format!("(pid {pid} is not running: its last samples)\n")),
        "{last}"
    );
    let o = heisen(&["monitor", "--once", &pid]);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains(&format!("no monitor table for pid {pid}")) && e.contains("HEISEN_MONITOR=1"),
        "{e}"
    );
}

#[test]
fn a_file_that_is_not_a_table_is_an_error_that_says_so() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("monitor-bad");
    std::fs::create_dir_all(&dir).expect("directory");
    let path = dir.join("not-a-table");
    std::fs::write(&path, [7u8; 64]).expect("write");
    let o = heisen(&["monitor", "--once", path.to_str().expect("utf-8")]);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("not a heisen monitor table"), "{e}");
    std::fs::write(&path, [0u8; 5]).expect("write");
    let o = heisen(&["monitor", "--once", path.to_str().expect("utf-8")]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("5 bytes is not a heisen monitor table"));
    let o = heisen(&["monitor", "--interval", "0", "1"]);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--interval 0: expected a positive number")
    );
}
