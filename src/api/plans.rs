//! The view of a plan: what an update or delete would do, as every kind's `Plan` answers it.

use crate::changes;
use crate::proto::compute::{Plan, PlanChange, PlanProviderObject, PlanViolation};

/// A JSON value as the text a plan shows; none is empty.
fn text(value: &serde_json::Value) -> String {
    if value.is_null() { String::new() } else { value.to_string() }
}

/// A plan as the API answers it.
pub(super) fn plan_view(plan: changes::Plan) -> Plan {
    Plan {
        effect: plan.effect().as_str().to_owned(),
        changes: plan
            .changes
            .into_iter()
            .map(|c| PlanChange {
                field: c.field,
                from: text(&c.from),
                to: text(&c.to),
                effect: c.effect.as_str().to_owned(),
                detail: c.detail,
            })
            .collect(),
        provider_objects: plan
            .provider_objects
            .into_iter()
            .map(|o| PlanProviderObject {
                action: o.action.as_str().to_owned(),
                provider: o.provider.to_owned(),
                kind: o.kind.to_owned(),
                name: o.name,
            })
            .collect(),
        disruptions: plan.disruptions,
        violations: plan
            .violations
            .into_iter()
            .map(|v| PlanViolation { code: v.code.to_owned(), field: v.field, description: v.description })
            .collect(),
        quota_effects: plan.quota_effects,
    }
}
