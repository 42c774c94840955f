//! The real app's window, launched on an X server in memory (Xvfb) with Mesa's software Vulkan:
//! `--window-size` is the size the window gets, in meeting mode (which zooms by 1.5) and after a
//! session in meeting mode saved its zoom. Each launch shows the sample's first view and closes
//! (`--exit-after-first-view`), printing the window's size in pixels as the window system gave it;
//! all the launches share one data folder, so each starts from the state the last one saved.
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};

/// An Xvfb server on a display number it chose itself (`-displayfd`), killed when dropped.
struct Xvfb {
    child: std::process::Child,
    display: String,
}

impl Xvfb {
    fn start() -> Option<Self> {
        let mut child = Command::new("Xvfb")
            .args(["-displayfd", "1", "-screen", "0", "2560x1440x24", "-nolisten", "tcp"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).ok()?;
        let number: u32 = line.trim().parse().ok()?;
        Some(Self { child, display: format!(":{number}") })
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _killed: std::io::Result<()> = self.child.kill();
        let _waited: std::io::Result<std::process::ExitStatus> = self.child.wait();
    }
}

#[test]
fn window_size_is_the_window_in_meeting_mode_and_after_a_meeting_session() {
    let Some(x) = Xvfb::start() else {
        crate::common::skipped("Xvfb is not installed (apt-get install xvfb)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("vantage-window-{}", std::process::id()));
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
    let runtime = dir.join("runtime");
    std::fs::create_dir_all(&runtime).unwrap();
    let sample = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample_runs/math_grpo_prm.jsonl");
    // Meeting mode twice, then plain launches after a meeting session saved its zoom, and so on.
    let launches = [true, true, false, true, false, false, true, false];
    let mut sizes = Vec::new();
    for meeting in launches {
        let mut command = Command::new(env!("CARGO_BIN_EXE_vantage"));
        command
            .arg(&sample)
            .args(["--window-size", "1280x720", "--exit-after-first-view"])
            .env("DISPLAY", &x.display)
            .env("WGPU_BACKEND", "vulkan")
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("XDG_DATA_HOME", dir.join("data"))
            .env_remove("WAYLAND_DISPLAY");
        if meeting {
            command.arg("--meeting");
        }
        let out = command.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
        let size = stdout.lines().find_map(|l| l.strip_prefix("window ")).map(str::to_owned);
        sizes.push((meeting, size));
    }
    let saved = std::fs::read_to_string(dir.join("data/vantage/app.ron")).unwrap();
    assert!(saved.contains("zoom_factor"), "each session saved its state");
    let wrong: Vec<_> = sizes.iter().filter(|(_, s)| s.as_deref() != Some("1280x720 pixels")).collect();
    assert!(wrong.is_empty(), "launches (meeting mode, size) that did not open 1280×720: {wrong:?} of {sizes:?}");
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
}
