//! One path for every change: the game state's writers (objects, created effects, players'
//! properties, timestamps, the turn and the active player) are called only by the kernel
//! (`crates/core/src/kernel/`), which makes the primitive changes of occurrences; the state
//! defines them. Everything else (an API action, a spell's one-shot change, a response's deed, a
//! ruleset event's declared change, a state-based check, a duration ending) asks the kernel.

use std::path::Path;

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/crates/core/src");

/// What writes the game state directly.
const WRITERS: [&str; 13] = [
    "object_mut(",
    "effects_mut(",
    "push_object(",
    "set_zone(",
    "set_attached(",
    "new_timestamp(",
    "set_property(",
    ".effects.retain(",
    ".effects.push(",
    "player_props)",
    "self.active =",
    "self.turn +=",
    "next_effect_id +=",
];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The lines outside the kernel (and the state, which defines the writers) that write the game
/// state, as `file:line: text`; comments and unit tests left out.
fn writes_outside_kernel(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut found = Vec::new();
    for f in files {
        let rel = f
            .strip_prefix(src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel.starts_with("kernel/") || rel == "state/mod.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let text = text.split("#[cfg(test)]").next().unwrap_or("");
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if WRITERS.iter().any(|w| code.contains(w)) {
                found.push(format!("{rel}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    found
}

#[test]
fn only_the_kernel_writes_the_game_state() {
    let found = writes_outside_kernel(Path::new(SRC));
    assert!(
        found.is_empty(),
        "the game state is written outside the kernel (make a `kernel::Change` instead):\n{}",
        found.join("\n")
    );
}

/// The check finds a write where one is put: a file outside the kernel that moves an object
/// itself.
#[test]
fn a_write_outside_the_kernel_is_found() {
    let dir = std::env::temp_dir().join(format!("rulecraft-kernel-check-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("kernel")).unwrap();
    std::fs::write(
        dir.join("kernel/mod.rs"),
        "fn make(&mut self) { self.object_mut(o).zone = z; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("sneaky.rs"),
        "// self.object_mut(o) in a comment is fine\nfn f(&mut self) { self.set_zone(o, z); }\n",
    )
    .unwrap();
    let found = writes_outside_kernel(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        found,
        vec!["sneaky.rs:2: fn f(&mut self) { self.set_zone(o, z); }"]
    );
}
