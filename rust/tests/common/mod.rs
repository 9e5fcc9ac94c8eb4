//! What the integration tests share: where the real snapshots, the evring
//! program and the producer example are, unique ring names, and skipping
//! with a reason (tests/rust/cargo_tap.py reports such a test as skipped).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Says why `test` does not run (then the test returns): on stdout, and to
/// the file EVRING_SKIP_FILE names, from which tests/rust/cargo_tap.py
/// reports the test skipped with its reason.
pub fn skip(test: &str, reason: &str) {
    println!("skipped {}: {}", test, reason);
    if let Some(file) = std::env::var_os("EVRING_SKIP_FILE") {
        use std::io::Write;
        // One write of the whole line: tests skip from parallel threads and processes,
        // and each write to a file opened for appending lands whole at its end.
        let line = format!("{}\t{}\n", test, reason);
        let mut f = std::fs::OpenOptions::new().append(true).open(file).expect("the skip file");
        f.write_all(line.as_bytes()).expect("a line in the skip file");
    }
}

/// The directory of the real Monad snapshots: EVRING_CONFORMANCE_DIR (scripts/test
/// exports it), else ../shared/data/monad-snapshots beside the repository.
pub fn snapshot_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("EVRING_CONFORMANCE_DIR") {
        return Some(PathBuf::from(dir));
    }
    let beside = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/monad-snapshots");
    if beside.is_dir() {
        Some(beside)
    } else {
        None
    }
}

/// A snapshot by name, or None (with the skip printed) when it is absent.
pub fn snapshot(test: &str, name: &str) -> Option<String> {
    match snapshot_dir() {
        None => {
            skip(test, "no snapshots: set EVRING_CONFORMANCE_DIR (scripts/test does)");
            None
        }
        Some(dir) => {
            let path = dir.join(format!("{}.snapshot.zst", name));
            if path.is_file() {
                Some(path.to_string_lossy().into_owned())
            } else {
                skip(test, &format!("{} is absent", path.display()));
                None
            }
        }
    }
}

fn built(env_name: &str, in_build: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env_name) {
        return Some(PathBuf::from(p));
    }
    let root = option_env!("EVRING_BUILD_ROOT")?;
    let p = Path::new(root).join(in_build);
    if p.is_file() {
        Some(p)
    } else {
        None
    }
}

const NO_EVRING: &str = "no evring program: set EVRING_BIN, or build against a build tree's evring-uninstalled.pc";

/// The evring program: EVRING_BIN, else the build tree's; None (the test
/// skipped, with the reason printed) when there is none.
pub fn evring_bin(test: &str) -> Option<PathBuf> {
    let found = built("EVRING_BIN", "tools/evring");
    if found.is_none() {
        skip(test, NO_EVRING);
    }
    found
}

/// The evring program for a comparison a test makes besides its own checks:
/// None (said, not skipped) when there is none.
pub fn evring_bin_for_comparison(test: &str) -> Option<PathBuf> {
    let found = built("EVRING_BIN", "tools/evring");
    if found.is_none() {
        println!("note {}: the comparison with the C++ CLI is left out: {}", test, NO_EVRING);
    }
    found
}

/// The C++ producer example: PRODUCER_BIN, else the build tree's.
pub fn producer_bin(test: &str) -> Option<PathBuf> {
    let found = built("PRODUCER_BIN", "examples/producer");
    if found.is_none() {
        skip(test, "no producer example: set PRODUCER_BIN, or build against a build tree");
    }
    found
}

/// The repository's schemas/ directory.
pub fn schemas_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas")
}

/// A ring path under /dev/shm unique to this process and test; removed
/// first, in case an earlier run died.
pub fn ring_path(what: &str) -> String {
    let path = format!("/dev/shm/evring-rust-{}-{}", std::process::id(), what);
    let _ = std::fs::remove_file(&path);
    path
}

/// Runs a command with a time bound, returning its stdout; panics with its
/// stderr when it fails. The output is read while it runs (a full pipe would
/// stop the command).
pub fn run(command: &mut Command, limit: Duration) -> String {
    let child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the command starts");
    let pid = child.id();
    let waiter = std::thread::spawn(move || child.wait_with_output());
    let start = Instant::now();
    while !waiter.is_finished() {
        if start.elapsed() > limit {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            let _ = waiter.join();
            panic!("{:?} did not finish within {:?}", command, limit);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = waiter.join().expect("the waiting thread").expect("the command's output");
    assert!(out.status.success(), "{:?} failed: {}", command, String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// The value of `"key":` in a JSON line, up to the next ',' or '}' (or the
/// closing quote of a string): enough for the flat values the tests read.
pub fn json_value<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let pattern = format!("\"{}\":", key);
    let at = line.find(&pattern)? + pattern.len();
    let rest = &line[at..];
    if let Some(s) = rest.strip_prefix('"') {
        return Some(&s[..s.find('"')?]);
    }
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    Some(&rest[..end])
}
