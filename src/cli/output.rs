//! Printing results: JSON in the API's own mapping (or the same as YAML), or a table: a few
//! columns by default, every field with `-o wide` ([`columns`] chooses them).

use prost::Message;
use prost_reflect::{DynamicMessage, SerializeOptions};
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
    dynamic
        .serialize_with_options(
            serde_json::value::Serializer,
            &SerializeOptions::new().stringify_64_bit_integers(false).skip_default_fields(false),
        )
        .expect("a message serializes")
}

/// Prints `rows` (JSON objects) in `format`.
pub fn print(format: OutputFormat, value: &Value, rows: &[Value]) {
    match format {
        OutputFormat::Json => println!("{}", serde_json::to_string_pretty(value).unwrap_or_default()),
        OutputFormat::Yaml => print!("{}", serde_yaml::to_string(value).unwrap_or_default()),
        OutputFormat::Table => print!("{}", table(rows, &columns::default_columns(rows))),
        OutputFormat::Wide => print!("{}", table(rows, &columns::wide_columns(rows))),
    }
}

/// Prints one resource `message` (of type `full_name`).
pub fn print_one(format: OutputFormat, message: &impl Message, full_name: &str) -> Result<(), String> {
    let json = to_json(message, full_name);
    print(format, &json, std::slice::from_ref(&json));
    Ok(())
}

/// Prints a list response `message` (of type `full_name`) whose items are in `field`.
pub fn print_list(format: OutputFormat, message: &impl Message, full_name: &str, field: &str) -> Result<(), String> {
    let json = to_json(message, full_name);
    let rows = json[field].as_array().cloned().unwrap_or_default();
    print(format, &json, &rows);
    Ok(())
}

/// A table of `rows` in `columns`, each as wide as its widest cell.
pub fn table(rows: &[Value], columns: &[Column]) -> String {
    if rows.is_empty() {
        return "(none)\n".to_owned();
    }
    let cells: Vec<Vec<String>> = rows.iter().map(|row| columns.iter().map(|c| c.cell(row)).collect()).collect();
    let mut widths: Vec<usize> = columns.iter().map(|c| c.header.chars().count()).collect();
    for row in &cells {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
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
        let text = table(&rows, &columns::default_columns(&rows));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "ID                  NAME");
        assert_eq!(lines[2], "globex-corporation  Globex");
        let wide = table(&rows, &columns::wide_columns(&rows));
        assert!(wide.starts_with("ID                  DISPLAY_NAME  VERSION  NESTED\n"), "{wide}");
        assert!(wide.contains("acme                Acme          1        a=1"), "{wide}");
    }
}
