//! The `problem` of a resource whose passes keep failing, as its work item records it: read
//! along with the resource's row in one column, and shown on its view until a pass succeeds.

/// Why a resource's passes keep failing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Problem {
    /// The failure's class: `permission`, `unreachable`, ...
    pub class: String,
    /// The last failure's words.
    pub message: String,
    /// Since when the passes fail (µs).
    pub since: i64,
    /// Failed passes in a row.
    pub attempts: i64,
    /// When the next pass comes (µs).
    pub next_attempt_at: i64,
}

/// The SQL expression of the `problem` column of a row whose id is `id` (`networks.id`) and
/// whose work kind is `work_kind` (literals of the code, never of a request): NULL while its
/// passes succeed.
pub fn column_sql(work_kind: &str, id: &str) -> String {
    format!(
        "(SELECT w.problem_class || '|' || COALESCE(w.problem_since, 0) || '|' || w.attempts || '|' || w.due_at \
         || '|' || COALESCE(w.last_error, '') FROM work_items w WHERE w.kind = '{work_kind}' \
         AND w.object_id = {id} AND w.problem_class <> '') AS problem"
    )
}

/// Reads the column [`column_sql`] selects.
pub fn from_column(column: Option<&str>) -> Option<Problem> {
    let mut parts = column?.splitn(5, '|');
    let class = parts.next()?.to_owned();
    let mut number = || parts.next().and_then(|n| n.parse::<i64>().ok());
    let (since, attempts, next_attempt_at) = (number()?, number()?, number()?);
    let message = parts.next().unwrap_or_default().to_owned();
    (!class.is_empty()).then_some(Problem { class, message, since, attempts, next_attempt_at })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_column_reads_back_with_bars_in_the_message() {
        let problem = from_column(Some("unreachable|10|3|40|cannot reach the API: a|b")).unwrap();
        assert_eq!(
            problem,
            Problem {
                class: "unreachable".into(),
                message: "cannot reach the API: a|b".into(),
                since: 10,
                attempts: 3,
                next_attempt_at: 40,
            }
        );
        assert_eq!(from_column(None), None);
        assert_eq!(from_column(Some("|1|2|3|x")), None);
    }
}
