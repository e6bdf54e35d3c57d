//! Printing results: JSON in the API's own mapping, or a table of a resource's scalar fields.

use prost::Message;
use prost_reflect::{DynamicMessage, SerializeOptions};
use serde_json::Value;

use crate::proto::descriptor_pool;

/// How `bc` prints results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// The JSON the `/api` paths return.
    Json,
    /// A table of the scalar fields.
    Table,
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
        OutputFormat::Table => print!("{}", table(rows)),
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

/// Prints `message` (of type `full_name`): as JSON whole, as a table only `columns` (JSON names)
/// of its items in `field`, or of itself when there is no field, so that a wide resource fits a
/// terminal.
pub fn print_columns(
    format: OutputFormat,
    message: &impl Message,
    full_name: &str,
    field: Option<&str>,
    columns: &[&str],
) -> Result<(), String> {
    let json = to_json(message, full_name);
    let items = match field {
        Some(field) => json[field].as_array().cloned().unwrap_or_default(),
        None => vec![json.clone()],
    };
    let rows: Vec<Value> = items
        .iter()
        .map(|item| Value::Object(columns.iter().map(|c| ((*c).to_owned(), item[*c].clone())).collect()))
        .collect();
    print(format, &json, &rows);
    Ok(())
}

/// A table of the scalar fields of `rows`, in the order the first row has them.
pub fn table(rows: &[Value]) -> String {
    let Some(Value::Object(first)) = rows.first() else { return "(none)\n".to_owned() };
    let columns: Vec<&String> = first.iter().filter(|(_, v)| !v.is_object() && !v.is_array()).map(|(k, _)| k).collect();
    let cell = |row: &Value, column: &str| match &row[column] {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut widths: Vec<usize> = columns.iter().map(|c| upper_snake(c).len()).collect();
    for row in rows {
        for (i, column) in columns.iter().enumerate() {
            widths[i] = widths[i].max(cell(row, column).chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        let padded: Vec<String> = cells.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
        format!("{}\n", padded.join("  ").trim_end())
    };
    let mut out = line(columns.iter().map(|c| upper_snake(c)).collect());
    for row in rows {
        out.push_str(&line(columns.iter().map(|c| cell(row, c)).collect()));
    }
    out
}

fn upper_snake(camel: &str) -> String {
    let mut out = String::new();
    for ch in camel.chars() {
        if ch.is_uppercase() {
            out.push('_');
        }
        out.push(ch.to_ascii_uppercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_shows_scalar_columns_aligned() {
        let rows = vec![
            serde_json::json!({"id": "acme", "displayName": "Acme", "version": 1, "nested": {"a": 1}}),
            serde_json::json!({"id": "globex-corporation", "displayName": "Globex", "version": 12, "nested": {}}),
        ];
        let text = table(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "ID                  DISPLAY_NAME  VERSION");
        assert_eq!(lines[2], "globex-corporation  Globex        12");
        assert!(!text.contains("nested"));
    }
}
