//! How files are read as text: a UTF-8 byte-order mark is skipped (columns count from after it);
//! bytes that are not UTF-8 are an error naming the file, line, column and byte offset (the
//! malformed cases are in tests/bad/).

use rulecraft_lang::loader::Loader;
use std::path::Path;

#[test]
fn a_byte_order_mark_is_skipped() {
    let dir = std::env::temp_dir().join(format!("rulecraft-bom-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create a temporary folder");
    let plain = std::fs::read("content/mtg/creatures.cards").expect("creatures.cards");
    let with_bom = dir.join("creatures.cards");
    std::fs::write(&with_bom, [&[0xEF, 0xBB, 0xBF][..], &plain].concat()).expect("write");

    let mut loader = Loader::new();
    let rpath = Path::new("rulesets/mtg-2020.rules");
    let env = loader.ruleset(rpath, None).expect("mtg-2020 loads");
    let ours = loader
        .content(&env, rpath, std::slice::from_ref(&with_bom), None)
        .unwrap_or_else(|e| panic!("{}", loader.short(&e)));
    let theirs = loader
        .content(&env, rpath, &["content/mtg/creatures.cards".into()], None)
        .unwrap_or_else(|e| panic!("{}", loader.short(&e)));
    let names = |c: &rulecraft_core::model::content::Content| {
        c.classes.iter().map(|k| k.name.clone()).collect::<Vec<_>>()
    };
    assert_eq!(names(&ours), names(&theirs));
    assert!(!ours.classes.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}
