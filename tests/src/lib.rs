//! Helpers for the end-to-end tests: finding (or building) the workspace's binaries.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The directory holding the workspace's binaries for the current profile (`target/debug`).
fn bin_dir() -> PathBuf {
    // Test executables live in target/<profile>/deps.
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile> directory")
        .to_path_buf()
}

/// Path of a workspace binary, building the `emergo-bot-server` binaries first if the test run
/// did not (a plain `cargo test -p emergo-tests` does not build other packages' binaries).
pub fn binary(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    let path = bin_dir().join(name);
    if !path.exists() {
        BUILT.get_or_init(|| {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
            let release = bin_dir().ends_with("release");
            let mut cmd = Command::new(cargo);
            cmd.args(["build", "-p", "emergo-bot-server", "--bins"]);
            if release {
                cmd.arg("--release");
            }
            let status = cmd.status().expect("run cargo build");
            assert!(status.success(), "cargo build of the binaries failed");
        });
    }
    assert!(path.exists(), "{} not found", path.display());
    path
}

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}
