//! Adopting the tool on an existing codebase: configuration, inline suppressions and baselines,
//! end to end through the binary on scratch workspaces.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str, lib: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("nonblock-adopt-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(
            dir.join("Cargo.toml"),
            "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
        )
        .unwrap();
        std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
        Scratch(dir)
    }
    fn path(&self, p: &str) -> PathBuf {
        self.0.join(p)
    }
    fn run(&self, extra: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_cargo-nonblock"))
            .arg("nonblock")
            .arg("--manifest-path")
            .arg(self.path("Cargo.toml"))
            .args(["--format", "json", "--offline"])
            .args(extra)
            .output()
            .unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

fn rules_at(v: &serde_json::Value) -> Vec<(u64, String)> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"][0]["line"].as_u64().unwrap(),
                f["rule"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

const LIB: &str = "pub fn legacy_load() -> u8 { 0 }\n\
pub async fn handler() {\n\
    std::fs::read(\"a\").ok();\n\
    legacy_load();\n\
    std::thread::sleep(std::time::Duration::from_millis(1));\n\
}\n";

#[test]
fn config_problems_are_all_reported_with_lines_and_exit_2() {
    let ws = Scratch::new("badcfg", LIB);
    std::fs::write(
        ws.path("nonblock.toml"),
        "alow = [\"x::y\"]\n\n[rules.NB0101]\nseverity = \"loud\"\n",
    )
    .unwrap();
    let out = ws.run(&[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("invalid configuration (2 problems)"), "{err}");
    assert!(err.contains("nonblock.toml:1: unknown key `alow`"), "{err}");
    assert!(err.contains("nonblock.toml:4: severity must be"), "{err}");
}

#[test]
fn config_changes_severity_disables_rules_and_declares_apis() {
    let ws = Scratch::new("cfg", LIB);
    let base = json(&ws.run(&[]));
    assert_eq!(
        rules_at(&base),
        [(3, "NB0101".to_string()), (5, "NB0201".to_string())]
    );
    std::fs::write(
        ws.path("nonblock.toml"),
        "[rules.thread-sleep]\nenabled = false\n\n[rules.NB0101]\nseverity = \"warning\"\n\n[[blocking]]\npath = \"app::legacy_load\"\ncategory = \"fs\"\nreason = \"reads the legacy file\"\nseverity = \"error\"\n",
    )
    .unwrap();
    let v = json(&ws.run(&[]));
    let f = v["findings"].as_array().unwrap();
    assert_eq!(
        rules_at(&v),
        [(3, "NB0101".to_string()), (4, "NB0101".to_string())]
    );
    assert_eq!(f[0]["severity"], "warning");
    assert_eq!(f[1]["api"], "app::legacy_load");
    assert_eq!(f[1]["severity"], "error");
}

#[test]
fn workspace_metadata_config_is_honoured() {
    let ws = Scratch::new("meta", LIB);
    let manifest = std::fs::read_to_string(ws.path("Cargo.toml")).unwrap();
    std::fs::write(ws.path("Cargo.toml"), format!("{manifest}\n[workspace.metadata.nonblock]\nrules = {{ NB0101 = {{ enabled = false }} }}\n")).unwrap();
    assert_eq!(rules_at(&json(&ws.run(&[]))), [(5, "NB0201".to_string())]);
}

#[test]
fn inline_suppressions_need_reasons_and_unused_ones_are_reported() {
    let lib = "pub async fn handler() {\n\
        // nonblock:allow(NB0101): the file is tiny and read once\n\
        std::fs::read(\"a\").ok();\n\
        // nonblock:allow(NB0201)\n\
        std::thread::sleep(std::time::Duration::from_millis(1));\n\
    }\n\
    // nonblock:allow(NB0601): no process is spawned any more\n\
    pub async fn other() {}\n";
    let ws = Scratch::new("suppress", lib);
    let out = ws.run(&[]);
    let v = json(&out);
    assert_eq!(
        rules_at(&v),
        [(5, "NB0201".to_string())],
        "a reasonless directive suppresses nothing"
    );
    assert_eq!(v["stats"]["suppressed"], 1);
    let kinds: Vec<&str> = v["notices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["suppression-without-reason", "unused-suppression"]);
    assert_eq!(out.status.code(), Some(1));
    // Notices are warnings: `--fail-on error` with only error findings suppressed and notices left.
    let quiet = Scratch::new(
        "suppress2",
        "pub async fn h() {\n}\n// nonblock:allow(NB0101): gone\npub fn x() {}\n",
    );
    assert_eq!(quiet.run(&["--fail-on", "error"]).status.code(), Some(0));
    assert_eq!(quiet.run(&["--fail-on", "warning"]).status.code(), Some(1));
}

#[test]
fn baselines_hide_known_findings_across_edits_and_report_new_and_stale_ones() {
    let ws = Scratch::new("baseline", LIB);
    let baseline = ws.path("nonblock-baseline.json");
    let b = baseline.to_str().unwrap();
    let wrote = ws.run(&["--write-baseline", b]);
    assert_eq!(
        wrote.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&wrote.stderr)
    );
    // Shift every line and edit elsewhere in the file: nothing new.
    let shifted = format!("//! Service handlers.\n\npub const VERSION: u8 = 2;\n{LIB}");
    std::fs::write(ws.path("src/lib.rs"), &shifted).unwrap();
    let out = ws.run(&["--baseline", b]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(json(&out)["stats"]["baselined"], 2);
    // A new blocking call is reported; a fixed one leaves a stale entry.
    let changed = shifted.replace(
        "std::thread::sleep(std::time::Duration::from_millis(1));",
        "std::fs::remove_file(\"b\").ok();",
    );
    std::fs::write(ws.path("src/lib.rs"), changed).unwrap();
    let v = json(&ws.run(&["--baseline", b]));
    assert_eq!(rules_at(&v), [(8, "NB0101".to_string())]);
    assert_eq!(v["notices"][0]["kind"], "stale-baseline");
    assert!(Path::new(b).is_file());
    let bad = ws.path("bad.json");
    std::fs::write(&bad, "{}").unwrap();
    assert_eq!(
        ws.run(&["--baseline", bad.to_str().unwrap()]).status.code(),
        Some(2)
    );
}

/// A baseline the v1 tool wrote for examples/demo-service (`--write-baseline` at commit 4b4cf10,
/// before findings were reported at their entry: 18 findings, one per async caller): it still
/// baselines every finding of today's run, with no stale entry, and the run says how to upgrade
/// the file. (Should the demo's code change, the entries for the changed paths turn stale: write
/// the file again with the tool built from that commit.)
#[test]
fn a_v1_baseline_of_the_demo_migrates_without_stale_entries() {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let v1 = data.join("demo-service.v1-baseline.json");
    let manifest =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo-service/Cargo.toml");
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_cargo-nonblock"))
            .args(["nonblock", "--manifest-path"])
            .arg(&manifest)
            .args(["--format", "json"])
            .args(extra)
            .output()
            .unwrap()
    };
    let all = json(&run(&[]));
    let findings = all["findings"].as_array().unwrap().len();
    assert!(findings > 0);
    let out = run(&["--baseline", v1.to_str().unwrap()]);
    let v = json(&out);
    assert_eq!(v["findings"].as_array().unwrap().len(), 0, "{v}");
    assert_eq!(v["stats"]["baselined"], findings);
    assert_eq!(v["notices"].as_array().unwrap().len(), 0, "{v}");
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("v1 fingerprints"), "{err}");
    // Rewritten, the baseline is v2 and holds one entry per finding.
    let rewritten = std::env::temp_dir().join(format!("nonblock-v2-{}.json", std::process::id()));
    assert_eq!(
        run(&["--write-baseline", rewritten.to_str().unwrap()])
            .status
            .code(),
        Some(0)
    );
    let b: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rewritten).unwrap()).unwrap();
    std::fs::remove_file(&rewritten).ok();
    assert_eq!(b["schema"], "cargo-nonblock-baseline/v2");
    assert_eq!(b["findings"].as_array().unwrap().len(), findings);
}
