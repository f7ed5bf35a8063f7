//! Every crate links its integration tests as one binary (`tests/main.rs`, cargo's
//! `autotests = false`): a file under `tests/` that main.rs does not name would never be
//! compiled, and its tests would silently never run. This test finds such a file. A test
//! that needs a process of its own (a driver loaded once per process) is a `[[test]]` of
//! its own in the crate's Cargo.toml, which counts as linked.

use std::path::{Path, PathBuf};

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `mod` names a tests/main.rs declares (a `#[path]` one by its name too).
fn declared(main_rs: &str) -> Vec<String> {
    main_rs
        .lines()
        .filter_map(|l| l.trim().strip_prefix("mod "))
        .filter_map(|l| l.strip_suffix(';'))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_test_file_is_a_module_of_its_crates_one_test_binary() {
    let mut missing = Vec::new();
    let mut crates = 0;
    for entry in std::fs::read_dir(crates_dir()).unwrap() {
        let tests = entry.unwrap().path().join("tests");
        let files: Vec<String> = match std::fs::read_dir(&tests) {
            Ok(dir) => dir
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter_map(|f| f.strip_suffix(".rs").map(str::to_string))
                .filter(|f| f != "main")
                .collect(),
            Err(_) => continue,
        };
        if files.is_empty() {
            continue;
        }
        crates += 1;
        let main = std::fs::read_to_string(tests.join("main.rs"))
            .unwrap_or_else(|_| panic!("{} has test files but no main.rs", tests.display()));
        let mods = declared(&main);
        let toml = std::fs::read_to_string(tests.join("../Cargo.toml")).unwrap();
        for f in files {
            let own_target = toml.contains(&format!("path = \"tests/{f}.rs\""));
            if !mods.contains(&f) && !own_target {
                missing.push(format!("{}/{f}.rs", tests.display()));
            }
        }
        assert!(
            toml.contains("autotests = false"),
            "{}: Cargo.toml must set autotests = false",
            tests.display()
        );
    }
    assert!(crates >= 5, "found test files in only {crates} crates");
    assert!(
        missing.is_empty(),
        "not linked into tests/main.rs: {missing:?}"
    );
}
