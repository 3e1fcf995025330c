//! SARIF and GitHub-annotation output on examples/demo-service: the SARIF snapshot, the path of
//! every finding read back from the SARIF alone the way GitHub code scanning shows it, and the
//! annotation commands. (Validation against the official SARIF 2.1.0 schema lives beside the
//! renderer, in `crates/analyzer/src/render/sarif.rs`, where the `jsonschema` dev-dependency is.)

use std::path::PathBuf;

use nonblock_analyzer::render::sarif::{self, Roots};
use nonblock_analyzer::render::{github, DiskSources};
use nonblock_analyzer::{Report, RuleDb};
use nonblock_tests::{repo_root, run_tool};
use serde_json::Value;

fn demo() -> (Report, Roots, DiskSources) {
    let ws = repo_root().join("examples/demo-service");
    let report = run_tool(&ws.join("Cargo.toml"));
    // `%SRCROOT%` is the workspace root here, so uris read `crates/api/...` wherever this
    // repository is checked out.
    let roots = Roots {
        workspace: ws.clone(),
        srcroot: ws.clone(),
        cargo_home: sarif::default_cargo_home(),
    };
    (report, roots, DiskSources { workspace_root: ws })
}

fn demo_sarif() -> (Report, Value) {
    let (report, roots, sources) = demo();
    let text = sarif::render(&report, &RuleDb::builtin(), &roots, &sources);
    (report, serde_json::from_str(&text).expect("SARIF is JSON"))
}

/// Machine- and release-specific parts of the log: the registry index directory and the tool's
/// own version.
fn filters() -> Vec<(String, String)> {
    let version = regex_escape(env!("CARGO_PKG_VERSION"));
    vec![
        (
            r"registry/src/[^/]+/".into(),
            "registry/src/[index]/".into(),
        ),
        (format!(r#""{version}""#), r#""[version]""#.into()),
        (
            format!(r#"cargo-nonblock {version}"#),
            "cargo-nonblock [version]".into(),
        ),
    ]
}

fn regex_escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if c.is_ascii_alphanumeric() {
                vec![c]
            } else {
                vec!['\\', c]
            }
        })
        .collect()
}

#[test]
fn demo_service_sarif_snapshot() {
    let (_, mut json) = demo_sarif();
    // The rule descriptors carry the rule docs, which change on their own schedule (rules/):
    // they are checked field by field below; the snapshot keeps their ids only.
    let rules = json["runs"][0]["tool"]["driver"]["rules"]
        .as_array_mut()
        .unwrap();
    let ids: Vec<Value> = rules.iter().map(|r| r["id"].clone()).collect();
    json["runs"][0]["tool"]["driver"]["rules"] = Value::Array(ids);
    let text = serde_json::to_string_pretty(&json).unwrap();
    let filters = filters();
    let filters: Vec<(&str, &str)> = filters
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    insta::with_settings!({filters => filters}, {
        insta::assert_snapshot!(text);
    });
}

#[test]
fn driver_describes_every_rule_of_the_database() {
    let (_, json) = demo_sarif();
    let driver = &json["runs"][0]["tool"]["driver"];
    assert_eq!(driver["name"], "cargo-nonblock");
    assert_eq!(driver["semanticVersion"], env!("CARGO_PKG_VERSION"));
    // No placeholder address: the field is present only when the manifest names a repository.
    match nonblock_analyzer::render::sarif::INFORMATION_URI {
        Some(uri) => assert_eq!(driver["informationUri"], uri),
        None => assert!(driver.get("informationUri").is_none(), "{driver}"),
    }
    let db = RuleDb::builtin();
    let rules = driver["rules"].as_array().unwrap();
    assert_eq!(rules.len(), db.rules.len());
    for (r, rule) in rules.iter().zip(&db.rules) {
        assert_eq!(r["id"], rule.id.as_str());
        assert_eq!(r["name"], rule.name.as_str());
        assert_eq!(r["shortDescription"]["text"], rule.summary.as_str());
        assert_eq!(r["fullDescription"]["text"], rule.doc.what.trim());
        assert!(r["help"]["text"]
            .as_str()
            .unwrap()
            .contains(rule.doc.why.trim()));
        assert!(r["help"]["markdown"]
            .as_str()
            .unwrap()
            .contains("```rust\n"));
        assert_eq!(
            r["defaultConfiguration"]["level"],
            rule.severity.as_str(),
            "{}",
            rule.id
        );
        let tags = r["properties"]["tags"].as_array().unwrap();
        assert!(tags.contains(&Value::from(rule.category.as_str())));
        assert!(["very-high", "high", "medium", "low"]
            .contains(&r["properties"]["precision"].as_str().unwrap()));
    }
}

/// One result as GitHub code scanning lays it out, read from the SARIF only: the rule's short
/// description as title, the level, the primary location, the message with its embedded link
/// resolved, then the code flow ("Show paths") one step per line.
fn github_view(run: &Value, result: &Value) -> String {
    let rule = &run["tool"]["driver"]["rules"][result["ruleIndex"].as_u64().unwrap() as usize];
    assert_eq!(rule["id"], result["ruleId"]);
    let mut out = format!(
        "{} {}: {} [{}]\n",
        rule["id"].as_str().unwrap(),
        rule["name"].as_str().unwrap(),
        rule["shortDescription"]["text"].as_str().unwrap(),
        result["level"].as_str().unwrap()
    );
    out.push_str(&format!("  at {}\n", place(&result["locations"][0])));
    let mut message = result["message"]["text"].as_str().unwrap().to_string();
    for related in result["relatedLocations"].as_array().unwrap() {
        let id = related["id"].as_i64().unwrap();
        let marker = format!("]({id})");
        if let Some(end) = message.find(&marker) {
            let start = message[..end].rfind('[').unwrap();
            let text = message[start + 1..end].to_string();
            message.replace_range(
                start..end + marker.len(),
                &format!("{text} ({})", place(related)),
            );
        }
    }
    let message = message.replace("\\[", "[").replace("\\]", "]");
    for line in message.lines() {
        out.push_str(&format!("  {line}\n"));
    }
    let flow = &result["codeFlows"][0];
    out.push_str(&format!(
        "  path: {}\n",
        flow["message"]["text"].as_str().unwrap()
    ));
    for (i, step) in flow["threadFlows"][0]["locations"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        out.push_str(&format!(
            "    {}. {}  {}\n",
            i + 1,
            place(&step["location"]),
            step["location"]["message"]["text"].as_str().unwrap()
        ));
    }
    out
}

/// `BASE/uri:line:col` of a SARIF location.
fn place(location: &Value) -> String {
    let phys = &location["physicalLocation"];
    let art = &phys["artifactLocation"];
    let base = match art["uriBaseId"].as_str().unwrap() {
        "%SRCROOT%" => String::new(),
        other => format!("{other}/"),
    };
    format!(
        "{base}{}:{}:{}",
        art["uri"].as_str().unwrap(),
        phys["region"]["startLine"],
        phys["region"]["startColumn"]
    )
}

#[test]
fn every_finding_shows_its_whole_path_step_by_step_in_the_sarif() {
    let (report, json) = demo_sarif();
    let run = &json["runs"][0];
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), report.findings.len());
    let mut views = String::new();
    for (f, r) in report.findings.iter().zip(results) {
        assert_eq!(r["ruleId"], f.rule.as_str());
        assert_eq!(r["level"], f.severity.as_str());
        assert_eq!(
            r["partialFingerprints"][sarif::FINGERPRINT_KEY],
            f.fingerprint.as_str()
        );
        assert_eq!(r["properties"]["confidence"], f.confidence.as_str());
        let primary = &r["locations"][0]["physicalLocation"];
        assert_eq!(primary["artifactLocation"]["uriBaseId"], "%SRCROOT%");
        assert_eq!(primary["artifactLocation"]["uri"], f.path[0].file.as_str());
        let region = &primary["region"];
        assert_eq!(region["startLine"], f.path[0].line);
        assert_eq!(region["startColumn"], f.path[0].column);
        assert_eq!(region["endLine"], f.path[0].line);
        assert!(region["endColumn"].as_u64().unwrap() > f.path[0].column as u64);
        let steps = r["codeFlows"][0]["threadFlows"][0]["locations"]
            .as_array()
            .unwrap();
        assert_eq!(steps.len(), f.path.len());
        for (s, step) in f.path.iter().zip(steps) {
            let loc = &step["location"];
            let art = &loc["physicalLocation"]["artifactLocation"];
            let uri = art["uri"].as_str().unwrap();
            if s.file.starts_with('/') {
                assert_eq!(art["uriBaseId"], "CARGO_HOME", "{}", s.file);
                assert!(s.file.ends_with(uri), "{} vs {uri}", s.file);
            } else {
                assert_eq!(art["uriBaseId"], "%SRCROOT%");
                assert_eq!(uri, s.file);
            }
            assert_eq!(loc["physicalLocation"]["region"]["startLine"], s.line);
            assert_eq!(
                loc["logicalLocations"][0]["fullyQualifiedName"],
                s.function.as_str()
            );
            assert!(loc["message"]["text"]
                .as_str()
                .unwrap()
                .contains(&format!("`{}` calls `{}`", s.function, s.callee)));
            assert_eq!(step["module"], s.package.as_str());
        }
        let related = r["relatedLocations"].as_array().unwrap();
        assert_eq!(
            related[0]["physicalLocation"]["region"]["startLine"],
            f.root.line
        );
        assert_eq!(related.len(), 1 + f.reached_from.len());
        for (c, loc) in f.reached_from.iter().zip(&related[1..]) {
            assert_eq!(loc["physicalLocation"]["region"]["startLine"], c.line);
            assert_eq!(
                loc["logicalLocations"][0]["fullyQualifiedName"],
                c.function.as_str()
            );
        }
        assert_eq!(r["properties"]["reachedFromCount"], f.reached_from_count);
        views.push_str(&github_view(run, r));
        views.push('\n');
    }
    assert!(
        !serde_json::to_string(&json).unwrap().contains("/home/")
            && !serde_json::to_string(&json).unwrap().contains("/root/"),
        "no absolute home path in the log"
    );
    let filters = filters();
    let filters: Vec<(&str, &str)> = filters
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    insta::with_settings!({filters => filters}, {
        insta::assert_snapshot!(views);
    });
}

#[test]
fn github_annotations_one_command_per_finding_with_its_path_and_async_callers() {
    let (report, roots, _) = demo();
    let out = github::render(&report, &RuleDb::builtin(), &roots);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines.len(),
        report.findings.len() + report.errors.len() + report.notices.len()
    );
    // Annotations come most severe first (GitHub shows only the first ten of each level).
    let mut findings: Vec<_> = report.findings.iter().collect();
    findings.sort_by_key(|f| f.severity != "error");
    for (f, line) in findings.iter().zip(&lines) {
        let command = if f.severity == "error" {
            "::error "
        } else {
            "::warning "
        };
        assert!(line.starts_with(command), "{line}");
        let first = &f.path[0];
        assert!(
            line.contains(&format!(
                "file={},line={},col={},title={}",
                first.file, first.line, first.column, f.rule
            )),
            "{line}"
        );
        let (_, message) = line.split_once("::").unwrap().1.split_once("::").unwrap();
        assert!(!message.contains('\n'));
        let decoded = message
            .replace("%0A", "\n")
            .replace("%0D", "\r")
            .replace("%25", "%");
        // Numbered steps (`  1. file:line:col ..`), then the async callers (`  - ..`).
        let steps: Vec<&str> = decoded
            .lines()
            .filter(|l| l.starts_with("  ") && !l.starts_with("  - "))
            .collect();
        assert_eq!(steps.len(), f.path.len(), "{decoded}");
        for (s, text) in f.path.iter().zip(steps) {
            assert!(
                text.ends_with(&format!("`{}` calls `{}`", s.function, s.callee)),
                "{text}"
            );
        }
        let callers: Vec<&str> = decoded.lines().filter(|l| l.starts_with("  - ")).collect();
        assert_eq!(callers.len(), f.reached_from.len(), "{decoded}");
        for (c, text) in f.reached_from.iter().zip(callers) {
            assert!(
                text.ends_with(&format!(
                    "{}:{}:{} {} `{}`",
                    c.file, c.line, c.column, c.kind, c.function
                )),
                "{text}"
            );
        }
        if f.reached_from_count > 0 {
            assert!(decoded.contains(&format!(
                "reached from {} async caller",
                f.reached_from_count
            )));
        }
    }
    assert!(!out.contains("/home/") && !out.contains("/root/"));
}

#[test]
fn paths_are_repository_relative_when_the_workspace_is_in_a_subdirectory() {
    let (report, _, sources) = demo();
    let roots = Roots {
        workspace: repo_root().join("examples/demo-service"),
        srcroot: repo_root(),
        cargo_home: Some(PathBuf::from("/nonexistent-cargo-home")),
    };
    let json: Value = serde_json::from_str(&sarif::render(
        &report,
        &RuleDb::builtin(),
        &roots,
        &sources,
    ))
    .unwrap();
    let r = &json["runs"][0]["results"][0];
    let uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        .as_str()
        .unwrap();
    assert!(uri.starts_with("examples/demo-service/crates/"), "{uri}");
    // Registry sources are recognised by cargo's layout even under another CARGO_HOME.
    let text = serde_json::to_string(&json).unwrap();
    assert!(text.contains(r#""uri":"registry/src/"#));
    assert!(!text.contains("../"));
}
