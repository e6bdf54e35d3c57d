//! The recipe for a new resource (docs/architecture.md) names real places: every file or folder it names in
//! backticks exists (templates such as `src/store/<resource>.rs` aside), so a move that leaves
//! the recipe pointing at nothing fails here.

use crate::harness::repo_root;

/// The recipe: docs/architecture.md from its heading to the next heading.
fn recipe() -> String {
    let guide = std::fs::read_to_string(repo_root().join("docs/architecture.md")).unwrap();
    let start = guide.find("## Adding an asynchronous resource").expect("docs/architecture.md has the recipe");
    let rest = &guide[start + 3..];
    let end = rest.find("\n#").map_or(rest.len(), |end| end + 1);
    rest[..end].to_owned()
}

#[test]
fn every_path_the_recipe_names_exists() {
    let text = recipe();
    let mut named = Vec::new();
    for (i, quoted) in text.split('`').enumerate() {
        let is_path = i % 2 == 1
            && quoted.contains('/')
            && !quoted.contains(['<', ' ', '{', '*'])
            && !quoted.contains("NNNN")
            && !quoted.starts_with("bettercompute.");
        if is_path {
            named.push(quoted.trim_end_matches("...").to_owned());
        }
    }
    assert!(named.len() > 20, "the recipe names its files: {named:?}");
    let missing: Vec<&String> = named.iter().filter(|path| !repo_root().join(path).exists()).collect();
    assert!(missing.is_empty(), "the recipe names paths that do not exist: {missing:?}");
}
