//! What a table shows of a resource, as kubectl's do: by default a few columns (id, name, state,
//! where it lives, its key figures, age); with `-o wide` every field, nested ones summed up.
//!
//! Columns are chosen from the fields the rows have rather than per message type, so that every
//! resource, including ones added later, gets a sensible table without a table of its own.

use serde_json::Value;

use super::when;

/// One column of a table: its header and how a row's cell reads.
pub struct Column {
    /// The header, in upper snake case (`MACHINE_TYPE`).
    pub header: String,
    cell: Cell,
}

/// What a default table gives up first when the terminal is too narrow: columns with a lower
/// rank go first; those of [`KEPT`] or more stay, and free text (the name, an audit's method)
/// is cut with an ellipsis instead.
fn rank(header: &str) -> u8 {
    match header {
        "ID" => 255,
        "NAME" => 250,
        "STATE" => 240,
        "PROBLEM" => 230,
        "AGE" => 220,
        "METHOD" => 215,
        "DECISION" | "OUTCOME" | "NODES" | "USES" | "EXPIRES" | "HEARTBEAT" => 200,
        "KIND" | "LIMIT" | "USED" | "QUANTITY" => 190,
        "LOCATION" | "REGION" => 180,
        "ROLE" | "CORDONED" => 170,
        "PROVIDER" | "TYPE" | "ADDRESS" => 150,
        "MACHINE_TYPE" | "SIZE" => 140,
        "CLUSTER" | "SUBNETS" => 130,
        "PRINCIPAL" | "SCOPE" => 120,
        "TENANT" => 100,
        "POOL" => 90,
        _ => 80,
    }
}

/// Columns ranked this or higher are never dropped to fit a terminal.
const KEPT: u8 = 220;

/// Free-text columns, cut (to no fewer than [`NARROWEST`] characters) rather than dropped.
const CUT: &[&str] = &["NAME", "METHOD", "PROBLEM"];

/// The fewest characters a cut cell keeps.
const NARROWEST: usize = 10;

/// The widths a table of `columns` takes in `width` characters, from each column's `natural`
/// width (its widest cell): `None` for a column dropped, a width below the natural one for a
/// column whose cells are cut. Columns stand two spaces apart; with no `width` (the output is not
/// a terminal) every column keeps its natural width.
pub fn fit(columns: &[Column], natural: &[usize], width: Option<usize>) -> Vec<Option<usize>> {
    let mut widths: Vec<Option<usize>> = natural.iter().copied().map(Some).collect();
    let Some(width) = width else { return widths };
    let total = |widths: &[Option<usize>]| {
        let shown: Vec<usize> = widths.iter().flatten().copied().collect();
        shown.iter().sum::<usize>() + 2 * shown.len().saturating_sub(1)
    };
    let cuttable = |i: usize| CUT.contains(&columns[i].header.as_str());
    let slack = |widths: &[Option<usize>]| -> usize {
        (0..columns.len())
            .filter(|&i| cuttable(i))
            .filter_map(|i| widths[i].map(|w| w.saturating_sub(NARROWEST.max(columns[i].header.len()))))
            .sum()
    };
    while total(&widths) > width && total(&widths) - width > slack(&widths) {
        let droppable = (0..columns.len())
            .filter(|&i| widths[i].is_some() && rank(&columns[i].header) < KEPT)
            .min_by_key(|&i| (rank(&columns[i].header), std::cmp::Reverse(i)));
        match droppable {
            Some(i) => widths[i] = None,
            None => break,
        }
    }
    // What is still too wide comes off the widest free text first.
    while total(&widths) > width {
        let widest = (0..columns.len())
            .filter(|&i| cuttable(i))
            .filter(|&i| widths[i].is_some_and(|w| w > NARROWEST.max(columns[i].header.len())))
            .max_by_key(|&i| widths[i]);
        match widest {
            Some(i) => widths[i] = widths[i].map(|w| w - 1),
            None => break,
        }
    }
    widths
}

/// How a cell is made from a row.
enum Cell {
    /// A field as it is (times as RFC 3339, nested values summed up).
    Field(String),
    /// The age of a time field (`5m`, `3h`, `2d`).
    Age(&'static str),
    /// How far a time field is from now (`in 1h`, `2d ago`).
    Until(&'static str),
    /// Nodes of a cluster: the sum of its node pools' live counts (else their asked counts).
    ClusterNodes,
    /// Nodes of a node pool: its live count (else its asked one).
    PoolNodes,
    /// How many items an array field has.
    Count(&'static str),
    /// A join token's uses out of its maximum (`1/3`).
    Uses,
    /// Why a resource is stuck: its problem's class and failed attempts (`permission x3`).
    Problem,
    /// An audited method without its package: `Instances/Create` for
    /// `bettercompute.compute.v1.Instances/Create`.
    Method,
}

/// The default columns, in order: each is shown when the rows have its field. The first field
/// present of each group wins (`name`, else `displayName`, else `hostname`).
const DEFAULT: &[(&str, &[&str])] = &[
    ("ID", &["id", "seq"]),
    ("NAME", &["name", "displayName", "hostname"]),
    ("STATE", &["state"]),
    ("CORDONED", &["cordoned"]),
    ("LOCATION", &["location"]),
    ("REGION", &["region"]),
    ("SCOPE", &["scope"]),
    ("PROVIDER", &["provider"]),
    ("KIND", &["kind", "resourceKind", "meter"]),
    ("TYPE", &["type"]),
    ("ROLE", &["role"]),
    ("PRINCIPAL", &["principalName", "principalId"]),
    ("METHOD", &["method"]),
    ("DECISION", &["decision"]),
    ("OUTCOME", &["outcome"]),
    ("POOL", &["poolId"]),
    ("CLUSTER", &["clusterName"]),
    ("TENANT", &["tenantId"]),
    ("MACHINE_TYPE", &["machineType"]),
    ("SIZE", &["size"]),
    ("ADDRESS", &["address", "publicIpv4", "endpoint"]),
    ("VERSION", &["kubernetesVersion"]),
    ("LIMIT", &["limit", "monthlyLimit"]),
    ("USED", &["used", "monthSpend"]),
    ("QUANTITY", &["quantity"]),
];

/// Fields that only the wide table shows, though [`DEFAULT`] names them, on the rows of
/// resources where they are not the point: every tenant resource has a `tenantId`, and the
/// scoped catalog rows are the only ones where it identifies the row.
fn shown_by_default(field: &str, row: &Value) -> bool {
    let has = |key: &str| row.get(key).is_some();
    match field {
        // A tenant resource's tenant is the one asked for; a quota's, offer's or budget's is
        // what tells its rows apart.
        "tenantId" => has("resourceKind") || has("excludedRegions") || has("monthlyLimit") || has("decision"),
        "poolId" => has("resourceKind") || has("excludedRegions") || has("cordoned") || has("maxUses"),
        "endpoint" => !has("nodePools"),
        _ => true,
    }
}

/// The columns of a default table of `rows`.
pub fn default_columns(rows: &[Value]) -> Vec<Column> {
    let Some(first) = rows.first() else { return Vec::new() };
    let mut columns = Vec::new();
    for (header, fields) in DEFAULT {
        if let Some(field) = fields.iter().find(|f| first.get(**f).is_some() && shown_by_default(f, first)) {
            let cell = if *field == "method" { Cell::Method } else { Cell::Field((*field).to_owned()) };
            columns.push(Column { header: (*header).to_owned(), cell });
        }
    }
    let has = |key: &str| first.get(key).is_some();
    let mut add = |header: &str, cell: Cell| columns.push(Column { header: header.to_owned(), cell });
    if has("nodePools") && has("kubernetesVersion") {
        add("NODES", Cell::ClusterNodes);
    }
    if has("machineType") && has("currentNodeCount") {
        add("NODES", Cell::PoolNodes);
    }
    if has("subnets") {
        add("SUBNETS", Cell::Count("subnets"));
    }
    if has("maxUses") {
        add("USES", Cell::Uses);
    }
    if has("notAfter") {
        add("EXPIRES", Cell::Until("notAfter"));
    } else if has("expiresAt") {
        add("EXPIRES", Cell::Until("expiresAt"));
    }
    if has("lastHeartbeatAt") {
        add("HEARTBEAT", Cell::Age("lastHeartbeatAt"));
    }
    // Shown only while a row is stuck: a resource whose passes fail says so in its table.
    if rows.iter().any(|row| row["problem"].is_object()) {
        add("PROBLEM", Cell::Problem);
    }
    if let Some(field) = ["createdAt", "joinedAt", "time", "hour"].into_iter().find(|f| has(f)) {
        add("AGE", Cell::Age(field));
    }
    columns
}

/// The columns of a wide table of `rows`: every field, in the order the first row has them.
pub fn wide_columns(rows: &[Value]) -> Vec<Column> {
    let Some(Value::Object(first)) = rows.first() else { return Vec::new() };
    first.keys().map(|key| Column { header: upper_snake(key), cell: Cell::Field(key.clone()) }).collect()
}

impl Column {
    /// A column of `field` as it is, headed `header`: for a command that chooses its own.
    pub fn named(header: &str, field: &str) -> Column {
        Column { header: header.to_owned(), cell: Cell::Field(field.to_owned()) }
    }

    /// A column of the age of time field `field`, headed `AGE`.
    pub fn age(field: &'static str) -> Column {
        Column { header: "AGE".to_owned(), cell: Cell::Age(field) }
    }

    /// The `PROBLEM` column: a stuck row's problem class and failed attempts.
    pub fn problem() -> Column {
        Column { header: "PROBLEM".to_owned(), cell: Cell::Problem }
    }

    /// The field a column shows as it is (a wide table's are all such).
    pub fn field(&self) -> Option<&str> {
        match &self.cell {
            Cell::Field(field) => Some(field),
            _ => None,
        }
    }

    /// The cell of `row` in this column.
    pub fn cell(&self, row: &Value) -> String {
        match &self.cell {
            Cell::Field(field) => summary(&row[field.as_str()]),
            Cell::Age(field) => when::parse(&row[*field]).map(when::age).unwrap_or_default(),
            Cell::Until(field) => when::parse(&row[*field]).map(when::relative).unwrap_or_default(),
            Cell::ClusterNodes => {
                let pools = row["nodePools"].as_array().map(Vec::as_slice).unwrap_or_default();
                pools.iter().map(pool_nodes).sum::<i64>().to_string()
            }
            Cell::PoolNodes => pool_nodes(row).to_string(),
            Cell::Count(field) => row[*field].as_array().map_or(0, Vec::len).to_string(),
            Cell::Uses => match row["maxUses"].as_i64() {
                Some(max) if max > 0 => format!("{}/{max}", row["uses"].as_i64().unwrap_or(0)),
                _ => summary(&row["uses"]),
            },
            Cell::Method => {
                let method = summary(&row["method"]);
                let (service, verb) = method.split_once('/').unwrap_or((method.as_str(), ""));
                let service = service.rsplit('.').next().unwrap_or(service);
                if verb.is_empty() { service.to_owned() } else { format!("{service}/{verb}") }
            }
            Cell::Problem => match &row["problem"] {
                Value::Object(problem) => {
                    format!(
                        "{} x{}",
                        summary(&problem["class"]),
                        summary(problem.get("attempts").unwrap_or(&Value::Null))
                    )
                }
                _ => String::new(),
            },
        }
    }
}

/// A node pool's live node count, else the count asked for.
fn pool_nodes(pool: &Value) -> i64 {
    match pool["currentNodeCount"].as_i64() {
        Some(live) if live > 0 => live,
        _ => pool["nodeCount"].as_i64().unwrap_or(0),
    }
}

/// A value in one cell: scalars as they are, a list of scalars comma-separated, a list of
/// objects by their names (else how many there are), an object as `key=value` pairs.
pub fn summary(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(items) if items.iter().all(|i| !i.is_object()) => {
            items.iter().map(summary).collect::<Vec<_>>().join(",")
        }
        Value::Array(items) => match items.iter().map(|i| i["name"].as_str()).collect::<Option<Vec<_>>>() {
            Some(names) => names.join(","),
            None => format!("{} items", items.len()),
        },
        Value::Object(fields) => fields
            .iter()
            .filter(|(_, v)| !v.is_null() && !v.is_object() && !v.is_array())
            .map(|(k, v)| format!("{k}={}", summary(v)))
            .collect::<Vec<_>>()
            .join(","),
        other => other.to_string(),
    }
}

/// `displayName` as `DISPLAY_NAME`.
pub fn upper_snake(camel: &str) -> String {
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
    #[test]
    fn a_stuck_row_adds_a_problem_column_with_its_class_and_attempts() {
        let rows = [
            serde_json::json!({"id": "kcl_1", "state": "ready"}),
            serde_json::json!({"id": "kcl_2", "state": "updating",
                "problem": {"class": "permission", "attempts": 3, "message": "refused"}}),
        ];
        let columns = default_columns(&rows);
        let problem = columns.iter().find(|c| c.header == "PROBLEM").expect("a PROBLEM column");
        assert_eq!((problem.cell(&rows[0]), problem.cell(&rows[1])), (String::new(), "permission x3".to_owned()));
        assert!(default_columns(&rows[..1]).iter().all(|c| c.header != "PROBLEM"), "none while nothing is stuck");
    }

    use super::*;
    use serde_json::json;

    fn headers(columns: &[Column]) -> Vec<&str> {
        columns.iter().map(|c| c.header.as_str()).collect()
    }

    #[test]
    fn a_cluster_shows_id_name_state_location_nodes_version_and_age() {
        let cluster = json!({"id": "kcl_1", "tenantId": "acme", "poolId": "pool_1", "name": "web",
            "location": "us-central1", "nodePools": [{"name": "a", "nodeCount": 2, "currentNodeCount": 0},
            {"name": "b", "nodeCount": 1, "currentNodeCount": 3}], "state": "ready", "endpoint": "https://x",
            "kubernetesVersion": "1.33", "createdAt": "2026-01-01T00:00:00Z"});
        let columns = default_columns(std::slice::from_ref(&cluster));
        assert_eq!(headers(&columns), ["ID", "NAME", "STATE", "LOCATION", "VERSION", "NODES", "AGE"]);
        assert_eq!(columns[5].cell(&cluster), "5");
    }

    #[test]
    fn an_audited_method_is_named_without_its_package() {
        let row = json!({"seq": 4, "method": "bettercompute.compute.v1.Instances/Create", "decision": "allow"});
        let columns = default_columns(std::slice::from_ref(&row));
        let method = columns.iter().find(|c| c.header == "METHOD").expect("a METHOD column");
        assert_eq!(method.cell(&row), "Instances/Create");
    }

    #[test]
    fn an_audit_row_names_its_principal_and_says_the_calls_outcome() {
        let row = json!({"seq": 4, "principalId": "prn_1", "principalName": "ci", "method": "x.v1.Instances/Create",
            "decision": "allow", "outcome": "INVALID_INPUT", "tenantId": "acme"});
        let columns = default_columns(std::slice::from_ref(&row));
        assert_eq!(headers(&columns), ["ID", "PRINCIPAL", "METHOD", "DECISION", "OUTCOME", "TENANT"]);
        let cells: Vec<String> = columns.iter().map(|c| c.cell(&row)).collect();
        assert_eq!(cells[1], "ci", "the name, not the id");
        assert_eq!(cells[4], "INVALID_INPUT");
    }

    #[test]
    fn a_wide_table_names_every_field_and_sums_up_nested_ones() {
        let row = json!({"id": "x", "zones": ["a", "b"], "nodePools": [{"name": "p"}], "labels": {"k": "v"}});
        let columns = wide_columns(std::slice::from_ref(&row));
        assert_eq!(headers(&columns), ["ID", "ZONES", "NODE_POOLS", "LABELS"]);
        let cells: Vec<String> = columns.iter().map(|c| c.cell(&row)).collect();
        assert_eq!(cells, ["x", "a,b", "p", "k=v"]);
    }
}
