//! Printing results: JSON in the API's own mapping (or the same as YAML), or a table: a few
//! columns by default, every field with `-o wide` ([`columns`] chooses them).

use prost::Message;
use prost_reflect::DynamicMessage;
use serde_json::Value;

use super::columns::{self, Column};
use crate::proto::descriptor_pool;

/// How `bcctl` prints results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// A table of a few columns: id, name, state, where it lives, key figures, age.
    Table,
    /// A table of every field, nested ones summed up.
    Wide,
    /// The JSON the `/api` paths return.
    Json,
    /// The same as YAML.
    Yaml,
}

impl OutputFormat {
    /// `BC_OUTPUT`'s format, else a table: the default of `--output`.
    pub fn from_environment() -> OutputFormat {
        let format = std::env::var("BC_OUTPUT").unwrap_or_default();
        <OutputFormat as clap::ValueEnum>::from_str(&format, false).unwrap_or(OutputFormat::Table)
    }

    /// Whether this prints the whole resource for programs rather than a table for people.
    pub fn is_structured(self) -> bool {
        matches!(self, OutputFormat::Json | OutputFormat::Yaml)
    }
}

/// A message as the JSON the gateway would return.
pub fn to_json(message: &impl Message, full_name: &str) -> Value {
    let descriptor = descriptor_pool().get_message_by_name(full_name).expect("the message is in the descriptor pool");
    let dynamic =
        DynamicMessage::decode(descriptor, message.encode_to_vec().as_slice()).expect("a message decodes as itself");
    crate::proto::json::to_value(&dynamic).expect("a message serializes")
}

/// Writes `text` to standard output. A reader that went away (`bcctl ... | head`) ends `bcctl`
/// quietly, as it ends every Unix tool, where `print!` would panic.
pub fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(error) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write the output: {error}");
        std::process::exit(1);
    }
}

/// Prints `rows` (JSON objects) in `format`.
pub fn print(format: OutputFormat, value: &Value, rows: &[Value]) {
    let text = match format {
        OutputFormat::Json => format!("{}\n", serde_json::to_string_pretty(value).unwrap_or_default()),
        OutputFormat::Yaml => serde_yaml::to_string(value).unwrap_or_default(),
        OutputFormat::Table => table(rows, &columns::default_columns(rows), terminal_width()),
        OutputFormat::Wide => wide_table(rows, terminal_width()),
    };
    emit(&text);
}

/// The terminal's width: `COLUMNS`, else that of the terminal standard output is; none when the
/// output goes to a file or a pipe, whose reader takes lines of any length.
pub fn terminal_width() -> Option<usize> {
    let from_env = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()).filter(|&c: &usize| c > 0);
    from_env.or_else(|| {
        let size = rustix::termios::tcgetwinsize(std::io::stdout()).ok()?;
        Some(usize::from(size.ws_col)).filter(|&c| c > 0)
    })
}

/// The width `--help` wraps at: the terminal's, at most 100 (longer lines read badly), and 100
/// off a terminal.
pub fn help_width() -> usize {
    terminal_width().unwrap_or(100).clamp(40, 100)
}

/// The longest cell of a wide table on a terminal: a nested field's summary can run to
/// hundreds of characters, and `-o json` shows it whole.
const WIDE_CELL: usize = 40;

/// A table of every field of `rows`, its long cells cut when it goes to a terminal.
fn wide_table(rows: &[Value], width: Option<usize>) -> String {
    let columns = columns::wide_columns(rows);
    let rows: Vec<Value> = match width {
        None => rows.to_vec(),
        Some(_) => rows.iter().map(|row| cut_fields(row, &columns)).collect(),
    };
    table(&rows, &columns, None)
}

/// `row` with each of `columns`' cells (as text) cut to [`WIDE_CELL`] characters.
fn cut_fields(row: &Value, columns: &[Column]) -> Value {
    let mut cut_row = serde_json::Map::new();
    for column in columns {
        let key = column.field().unwrap_or_default();
        let cell = column.cell(row);
        let value =
            if cell.chars().count() > WIDE_CELL { Value::String(cut(&cell, WIDE_CELL)) } else { row[key].clone() };
        cut_row.insert(key.to_owned(), value);
    }
    Value::Object(cut_row)
}

/// `text` cut to `width` characters, its last one an ellipsis where it was cut.
fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let kept: String = text.chars().take(width.saturating_sub(1)).collect();
    format!("{kept}…")
}

/// Prints one resource `message` (of type `full_name`).
pub fn print_one(format: OutputFormat, message: &impl Message, full_name: &str) -> Result<(), String> {
    let json = to_json(message, full_name);
    print(format, &json, std::slice::from_ref(&json));
    Ok(())
}

/// Prints a list response `message` (of type `full_name`) whose items are in `field`. Its
/// default table leaves out the scope the command line named (`--pool`, `--tenant`): every row
/// has it, so it tells none apart.
pub fn print_list(format: OutputFormat, message: &impl Message, full_name: &str, field: &str) -> Result<(), String> {
    let json = to_json(message, full_name);
    let rows = json[field].as_array().cloned().unwrap_or_default();
    if format != OutputFormat::Table {
        print(format, &json, &rows);
        return Ok(());
    }
    let named = named_scopes(std::env::args().skip(1));
    let columns: Vec<Column> =
        columns::default_columns(&rows).into_iter().filter(|c| !named.contains(&c.header.as_str())).collect();
    emit(&table(&rows, &columns, terminal_width()));
    Ok(())
}

/// The headers of the scopes the command line `args` names: `POOL` for `--pool`, `TENANT` for
/// `--tenant`.
fn named_scopes(args: impl Iterator<Item = String>) -> Vec<&'static str> {
    let mut named = Vec::new();
    for arg in args {
        for (flag, header) in [("--pool", "POOL"), ("--tenant", "TENANT")] {
            if arg == flag || arg.strip_prefix(flag).is_some_and(|rest| rest.starts_with('=')) {
                named.push(header);
            }
        }
    }
    named
}

/// A table of `rows` in `columns`, each as wide as its widest cell, fitted to a terminal `width`
/// as [`columns::fit`] says (columns dropped, free text cut).
pub fn table(rows: &[Value], columns: &[Column], width: Option<usize>) -> String {
    if rows.is_empty() {
        return "(none)\n".to_owned();
    }
    let cells: Vec<Vec<String>> = rows.iter().map(|row| columns.iter().map(|c| c.cell(row)).collect()).collect();
    let mut natural: Vec<usize> = columns.iter().map(|c| c.header.chars().count()).collect();
    for row in &cells {
        for (width, cell) in natural.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let widths = columns::fit(columns, &natural, width);
    let line = |cells: &[String]| {
        let padded: Vec<String> =
            cells.iter().zip(&widths).filter_map(|(c, w)| w.map(|w| format!("{:<w$}", cut(c, w)))).collect();
        format!("{}\n", padded.join("  ").trim_end())
    };
    let mut out = line(&columns.iter().map(|c| c.header.clone()).collect::<Vec<_>>());
    for row in &cells {
        out.push_str(&line(row));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_aligns_its_columns() {
        let rows = vec![
            serde_json::json!({"id": "acme", "displayName": "Acme", "version": 1, "nested": {"a": 1}}),
            serde_json::json!({"id": "globex-corporation", "displayName": "Globex", "version": 12, "nested": {}}),
        ];
        let text = table(&rows, &columns::default_columns(&rows), None);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "ID                  NAME");
        assert_eq!(lines[2], "globex-corporation  Globex");
        let wide = table(&rows, &columns::wide_columns(&rows), None);
        assert!(wide.starts_with("ID                  DISPLAY_NAME  VERSION  NESTED\n"), "{wide}");
        assert!(wide.contains("acme                Acme          1        a=1"), "{wide}");
    }

    #[test]
    fn a_narrow_terminal_drops_the_least_needed_columns_then_cuts_the_name() {
        let rows = vec![serde_json::json!({"id": "kcl_8e4rs1h98nw101zkt2mw77k5tr", "name": "analytics-production",
            "state": "ready", "location": "us-central1-a", "kubernetesVersion": "1.32.6-gke.1200",
            "nodePools": [], "createdAt": "2026-01-01T00:00:00Z"})];
        let columns = columns::default_columns(&rows);
        let wide = table(&rows, &columns, Some(120));
        assert!(wide.starts_with("ID  "), "{wide}");
        assert_eq!(wide.lines().next().unwrap().split_whitespace().count(), 7, "all fit in 120: {wide}");
        let narrow = table(&rows, &columns, Some(80));
        let headers: Vec<&str> = narrow.lines().next().unwrap().split_whitespace().collect();
        assert_eq!(headers, ["ID", "NAME", "STATE", "LOCATION", "NODES", "AGE"], "{narrow}");
        assert!(narrow.lines().all(|line| line.chars().count() <= 80), "{narrow}");
        let tiny = table(&rows, &columns, Some(60));
        assert!(tiny.contains("analytics-prod…") && tiny.lines().all(|l| l.chars().count() <= 60), "{tiny}");
        assert!(tiny.contains("kcl_8e4rs1h98nw101zkt2mw77k5tr"), "an id is never cut: {tiny}");
    }

    #[test]
    fn the_scope_the_command_line_names_is_no_column() {
        let args = ["nodes", "list", "--pool", "pool_1", "--tenant=acme"].map(str::to_owned);
        assert_eq!(named_scopes(args.into_iter()), ["POOL", "TENANT"]);
        assert!(named_scopes(["--pools".to_owned()].into_iter()).is_empty());
    }
}
