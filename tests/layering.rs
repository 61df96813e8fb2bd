//! The crate's layers, enforced: every `use crate::X` (or `crate::X::…`
//! path) in `src/` names a module of a lower layer than its own, so no
//! module imports one above it, and no clap type leaves `cli` (only
//! `options` and `main` import it). Doc comments do not count.

use std::path::Path;

/// Bottom to top. A module may use modules of lower layers only.
const LAYERS: &[&[&str]] = &[
    &["escape", "units"],
    &["cpuset", "input"],
    &["affinity"],
    &["probe"],
    &["plan"],
    &["measure"],
    &["judge"],
    &["saved", "exit"],
    &["fleet"],
    &["report"],
    &["study"],
    &["commands"],
    &["cli"],
    &["options"],
];

fn layer_of(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|layer| layer.contains(&module))
        .unwrap_or_else(|| panic!("module '{module}' has no layer in tests/layering.rs"))
}

/// The top-level module a source file belongs to (`src/judge/gate.rs` → judge).
fn module_of(file: &Path, src: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

fn source_files(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            source_files(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

#[test]
fn no_module_imports_one_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    source_files(&src, &mut files);
    let mut violations = Vec::new();
    for file in &files {
        let module = module_of(file, &src);
        if module == "main" || module == "lib" {
            continue;
        }
        let own = layer_of(&module);
        let text = std::fs::read_to_string(file).unwrap();
        for (number, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            for (at, _) in code.match_indices("crate::") {
                let used: String = code[at + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if used.is_empty() || used == module {
                    continue;
                }
                if layer_of(&used) >= own {
                    violations.push(format!(
                        "{}:{}: {module} uses crate::{used}",
                        file.strip_prefix(&src).unwrap().display(),
                        number + 1
                    ));
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "imports pointing up:\n{}",
        violations.join("\n")
    );
}
