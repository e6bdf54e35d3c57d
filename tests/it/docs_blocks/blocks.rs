//! A document's ```` ```sh ```` blocks cut into the commands the runner sends to its shell, and
//! what each command's comment says it must do. A block may be indented (a step of a numbered
//! list): its indentation is taken off its lines.

/// One command of a block: its text (continued lines and here-documents joined) and the line
/// of the document it starts on.
#[derive(Debug, PartialEq)]
pub struct Step {
    pub line: usize,
    pub text: String,
}

/// How many ```` ```sh ```` blocks `markdown` has, run or not.
pub fn block_count(markdown: &str) -> usize {
    markdown.lines().filter(|line| line.trim() == "```sh").count()
}

/// The commands of every block of `markdown` that is run, in order.
pub fn steps(markdown: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut lines = markdown.lines().enumerate();
    let mut previous = "";
    while let Some((_, line)) = lines.next() {
        if line.trim() != "```sh" {
            if !line.trim().is_empty() {
                previous = line;
            }
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let run = !previous.trim_start().starts_with("<!-- not run:");
        let mut current: Option<Step> = None;
        let mut heredoc: Option<String> = None;
        for (number, line) in lines.by_ref() {
            if line.trim() == "```" {
                break;
            }
            // A here-document's lines keep what is theirs beyond the block's indentation.
            let line = match line.get(..indent) {
                Some(head) if head.trim().is_empty() => &line[indent..],
                _ => line.trim_start(),
            };
            let step = current.get_or_insert_with(|| Step { line: number + 1, text: String::new() });
            if step.text.is_empty()
                && heredoc.is_none()
                && (line.trim().is_empty() || line.trim_start().starts_with('#'))
            {
                current = None;
                continue;
            }
            step.text.push_str(line);
            step.text.push('\n');
            if let Some(end) = &heredoc {
                if line.trim() == end {
                    heredoc = None;
                }
            } else if let Some(end) = heredoc_end(line) {
                heredoc = Some(end);
            }
            if heredoc.is_none() && !line.trim_end().ends_with('\\') {
                steps.extend(current.take().filter(|_| run));
            }
        }
        previous = "";
    }
    steps
}

/// The word that ends a here-document `line` starts (`<<'YAML'`, `<<EOF`).
fn heredoc_end(line: &str) -> Option<String> {
    let at = line.find("<<")?;
    let word: String = line[at + 2..]
        .trim_start_matches('-')
        .trim_start()
        .chars()
        .filter(|c| *c != '\'' && *c != '"')
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!word.is_empty()).then_some(word)
}

/// What a step's comment says of it: `Some(word)` when it must fail (the word, possibly empty,
/// to find in its output), `None` when it must succeed.
pub fn refusal(text: &str) -> Option<String> {
    let rest = text.lines().find_map(|line| line.split_once(" # refused").map(|(_, rest)| rest))?;
    let word = rest.trim_start().strip_prefix('(').and_then(|r| r.split_once(')')).map(|(w, _)| w.to_owned());
    Some(word.unwrap_or_default())
}

#[test]
fn blocks_split_into_commands_and_say_which_must_fail() {
    let markdown = "text\n\n```sh\n# a comment\nA=1\nbcctl a \\\n  --b   # refused (inUse) while x\n\ncat > f <<'YAML'\nk: v\n# kept\nYAML\n```\n\n<!-- not run: needs a real database -->\n```sh\nbc-server migrate\n```\n";
    let found = steps(markdown);
    let texts: Vec<&str> = found.iter().map(|s| s.text.as_str()).collect();
    assert_eq!(
        texts,
        ["A=1\n", "bcctl a \\\n  --b   # refused (inUse) while x\n", "cat > f <<'YAML'\nk: v\n# kept\nYAML\n"]
    );
    assert_eq!(found[1].line, 6);
    assert_eq!(refusal(texts[1]).as_deref(), Some("inUse"));
    assert_eq!(refusal(texts[0]), None);
    assert_eq!(refusal("bcctl x   # refused: only operators\n").as_deref(), Some(""));
    assert_eq!(block_count(markdown), 2);
}

#[test]
fn an_indented_block_runs_without_its_indentation() {
    let markdown = "1. **A step.**\n\n   ```sh\n   A=1\n   cat > f <<EOF\n     deeper\n   EOF\n   ```\n\n   <!-- not run: why -->\n   ```sh\n   B=2\n   ```\n";
    let texts: Vec<String> = steps(markdown).into_iter().map(|s| s.text).collect();
    assert_eq!(texts, ["A=1\n", "cat > f <<EOF\n  deeper\nEOF\n"]);
    assert_eq!(block_count(markdown), 2);
}
