// Finds libevring.so for the link, with no build-dependency crates.
//
// In order: EVRING_LIB_DIR (a directory holding libevring.so), else
// `pkg-config --libs evring` run as a command, which finds an installed
// evring.pc, or this build tree's when PKG_CONFIG_PATH=BUILD/meson-uninstalled
// (docs/rust.md). An rpath goes with the library, so the tests and programs
// run without LD_LIBRARY_PATH. When pkg-config names a build tree, its root
// is passed to the tests as EVRING_BUILD_ROOT (they find the evring program
// and the producer example there).
use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=EVRING_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-changed=build.rs");
    if let Ok(dir) = env::var("EVRING_LIB_DIR") {
        println!("cargo:rustc-link-search=native={}", dir);
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
        println!("cargo:rustc-link-lib=dylib=evring");
        return;
    }
    let libs = match pkg_config(&["--libs", "evring"]) {
        Ok(libs) => libs,
        Err(why) => panic!(
            "evring: libevring.so not found ({}). Install evring (meson install), or point at a build \
             tree: PKG_CONFIG_PATH=BUILD/meson-uninstalled, or EVRING_LIB_DIR=BUILD/lib/bindings",
            why
        ),
    };
    for flag in libs.split_whitespace() {
        if let Some(dir) = flag.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={}", dir);
        } else if let Some(lib) = flag.strip_prefix("-l") {
            println!("cargo:rustc-link-lib=dylib={}", lib);
        } else if flag.starts_with("-Wl,") {
            println!("cargo:rustc-link-arg={}", flag);
        }
    }
    // Only a build tree's evring-uninstalled.pc has srcdir; its prefix is the build root.
    if pkg_config(&["--variable=srcdir", "evring"]).map_or(false, |s| !s.trim().is_empty()) {
        if let Ok(root) = pkg_config(&["--variable=prefix", "evring"]) {
            println!("cargo:rustc-env=EVRING_BUILD_ROOT={}", root.trim());
        }
    }
}

fn pkg_config(args: &[&str]) -> Result<String, String> {
    let out = Command::new("pkg-config")
        .args(args)
        .output()
        .map_err(|e| format!("running pkg-config: {}", e))?;
    if !out.status.success() {
        return Err(format!(
            "pkg-config {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
