//! The Rust samples of README.md and docs/rust.md are what examples/doc_samples.rs
//! compiles (each block exactly, between its SAMPLE-BEGIN and SAMPLE-END markers),
//! and the readers among them print what they say over the real snapshot.
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `n`th ```rust block of a markdown file.
fn rust_block(file: &str, n: usize) -> String {
    let text = std::fs::read_to_string(repository().join(file)).expect("the markdown file");
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match current.as_mut() {
            None if line == "```rust" => current = Some(String::new()),
            Some(_) if line == "```" => blocks.push(current.take().expect("a block")),
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    blocks.into_iter().nth(n).unwrap_or_else(|| panic!("{} has no rust block {}", file, n))
}

/// The region of examples/doc_samples.rs marked `name`, less the function's indent.
fn sample(name: &str) -> String {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/doc_samples.rs")).unwrap();
    let begin = format!("// SAMPLE-BEGIN {}", name);
    let mut out = String::new();
    let mut inside = false;
    for line in text.lines() {
        if line.trim() == begin {
            inside = true;
        } else if line.trim() == "// SAMPLE-END" && inside {
            return out;
        } else if inside {
            out.push_str(line.strip_prefix("    ").unwrap_or(line));
            out.push('\n');
        }
    }
    panic!("examples/doc_samples.rs has no sample {}", name)
}

#[test]
fn the_rust_samples_of_the_docs_are_the_compiled_ones() {
    assert_eq!(rust_block("README.md", 0), sample("README.md"));
    assert_eq!(rust_block("docs/rust.md", 0), sample("docs/rust.md 1"));
    assert_eq!(rust_block("docs/rust.md", 1), sample("docs/rust.md 2"));
    assert_eq!(rust_block("docs/rust.md", 2), sample("docs/rust.md 3"));
}

/// examples/doc_samples, which a whole `cargo test` builds beside the test binaries' deps/.
fn sample_program(test: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().unwrap();
    let program = exe.parent().unwrap().parent().unwrap().join("examples").join("doc_samples");
    if program.is_file() {
        Some(program)
    } else {
        common::skip(test, "examples/doc_samples is not built: run the whole `cargo test`, which builds the examples");
        None
    }
}

#[test]
fn the_reading_samples_print_what_they_say() {
    let test = "the_reading_samples_print_what_they_say";
    let dir = match common::snapshot(test, "emn-30b-15m") {
        Some(path) => Path::new(&path).parent().unwrap().to_path_buf(),
        None => return,
    };
    let program = match sample_program(test) {
        Some(p) => p,
        None => return,
    };
    // The samples name the snapshot by its file name: they run in its directory.
    let run_sample = |which: &str| common::run(Command::new(&program).arg(which).current_dir(&dir), Duration::from_secs(120));
    // README: every event from block 15000009's BLOCK_START to the end.
    let readme = run_sample("readme");
    assert!(readme.starts_with("41692 Some(\"BLOCK_START\")\n"), "{}", &readme[..200.min(readme.len())]);
    // docs/rust.md: the block numbers from 15000009 on.
    let blocks = run_sample("rust-md-read");
    let expected: String = (15000009..=15000030).map(|n| format!("block {}\n", n)).collect();
    assert_eq!(blocks, expected);
    // docs/rust.md, "Assembled blocks": blocks 15000028 to 15000030, finalized.
    let assembled = run_sample("rust-md-blocks");
    let labels: Vec<&str> = assembled.lines().map(|l| l.split(':').next().unwrap_or("")).collect();
    assert_eq!(labels, ["block 15000028 Complete", "block 15000029 Complete", "block 15000030 Complete"], "{}", assembled);
    assert!(assembled.lines().all(|l| l.ends_with("stages [\"ended\", \"finalized\"]")), "{}", assembled);
}
