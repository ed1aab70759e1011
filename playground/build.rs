//! Embeds the project's bundled rulesets and content, and the playground's examples (scenarios the
//! project already has), as texts: the playground's loader reads them from memory, never from disk.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The examples menu: a title and a scenario file of the project, one entry each.
const EXAMPLES: &[(&str, &str)] = &[
    (
        "Mary's lamb (layer 7c)",
        "scenarios/layers/7c-marys-lamb.scenario",
    ),
    (
        "Blood Moon and Urborg (layer 4)",
        "scenarios/layers/4-land-types-blood-moon-urborg-spreading-seas.scenario",
    ),
    (
        "An Honor gain reduced to zero",
        "scenarios/timing/reduced-to-zero.scenario",
    ),
    (
        "A batch: Incinerate and Healing Salve",
        "scenarios/batches/damage-prevention.scenario",
    ),
];

fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut list: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    list.sort();
    for p in list {
        if p.is_dir() {
            files(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = manifest
        .parent()
        .expect("playground/ is in the project")
        .to_path_buf();
    let mut bundled = Vec::new();
    files(&root.join("rulesets"), "rules", &mut bundled);
    files(&root.join("content"), "cards", &mut bundled);
    let mut out = String::from("/// Every bundled ruleset and content file: its path in the project, and its text.\npub const BUNDLED: &[(&str, &str)] = &[\n");
    for p in &bundled {
        let rel = p.strip_prefix(&root).expect("under the root");
        let _ = writeln!(
            out,
            "    ({:?}, include_str!({:?})),",
            rel.display().to_string(),
            p.display().to_string()
        );
    }
    out.push_str("];\n/// The examples: a title, the scenario's path in the project, and its text.\npub const EXAMPLES: &[(&str, &str, &str)] = &[\n");
    for (title, rel) in EXAMPLES {
        let p = root.join(rel);
        let _ = writeln!(
            out,
            "    ({title:?}, {rel:?}, include_str!({:?})),",
            p.display().to_string()
        );
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it")).join("bundled.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
    println!("cargo:rerun-if-changed=../rulesets");
    println!("cargo:rerun-if-changed=../content");
    println!("cargo:rerun-if-changed=../scenarios");
}
