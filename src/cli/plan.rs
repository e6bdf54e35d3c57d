//! `--dry-run` of the update and delete commands: the kind's `Plan` of the very request the
//! command would send, printed like a diff (or as the API's JSON with `-o json`); nothing is
//! changed. A refused plan fails the command as the real call would, naming the fields.

use crate::proto::compute::{
    DeleteCertificateRequest, DeleteInstanceRequest, DeleteKubernetesClusterRequest, DeleteKubernetesNodePoolRequest,
    DeleteLoadBalancerRequest, DeleteMetalRequest, DeleteNetworkRequest, DeleteVolumeRequest, Plan,
    PlanCertificateRequest, PlanInstanceRequest, PlanKubernetesClusterRequest, PlanKubernetesNodePoolRequest,
    PlanLoadBalancerRequest, PlanMetalRequest, PlanNetworkRequest, PlanVolumeRequest, UpdateKubernetesClusterRequest,
    UpdateKubernetesNodePoolRequest, UpdateLoadBalancerRequest, UpdateMetalRequest, UpdateNetworkRequest,
    UpdateVolumeRequest, plan_certificate_request, plan_instance_request, plan_kubernetes_cluster_request,
    plan_kubernetes_node_pool_request, plan_load_balancer_request, plan_metal_request, plan_network_request,
    plan_volume_request,
};

use super::{Cli, output};

/// The flag every update and delete of an asynchronous kind has.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct DryRun {
    /// Show what the change would do (its plan) and change nothing; fails when it would be refused.
    #[arg(long)]
    pub dry_run: bool,
}

/// An update or delete request that a kind's `Plan` takes: [`Change::planned`] wraps it.
pub trait Change {
    /// The kind's plan request.
    type Request;
    /// The plan request of this call, as it would be made.
    fn planned(self) -> Self::Request;
}

/// Implements [`Change`] for each `change => Variant` of a plan request (its oneof module named).
macro_rules! changes {
    ($($plan:ident in $module:ident { $($change:ident => $variant:ident),+ })*) => {
        $($(
            impl Change for $change {
                type Request = $plan;
                fn planned(self) -> $plan {
                    $plan { change: Some($module::Change::$variant(self)) }
                }
            }
        )+)*
    };
}

changes! {
    PlanKubernetesClusterRequest in plan_kubernetes_cluster_request {
        UpdateKubernetesClusterRequest => Update, DeleteKubernetesClusterRequest => Delete
    }
    PlanKubernetesNodePoolRequest in plan_kubernetes_node_pool_request {
        UpdateKubernetesNodePoolRequest => Update, DeleteKubernetesNodePoolRequest => Delete
    }
    PlanNetworkRequest in plan_network_request { UpdateNetworkRequest => Update, DeleteNetworkRequest => Delete }
    PlanInstanceRequest in plan_instance_request { DeleteInstanceRequest => Delete }
    PlanCertificateRequest in plan_certificate_request { DeleteCertificateRequest => Delete }
    PlanLoadBalancerRequest in plan_load_balancer_request {
        UpdateLoadBalancerRequest => Update, DeleteLoadBalancerRequest => Delete
    }
    PlanVolumeRequest in plan_volume_request { UpdateVolumeRequest => Update, DeleteVolumeRequest => Delete }
    PlanMetalRequest in plan_metal_request { UpdateMetalRequest => Update, DeleteMetalRequest => Delete }
}

/// Prints `plan` as `-o` asks; an error (the command fails) when the plan is `refused`.
pub fn show(cli: &Cli, plan: &Plan) -> Result<(), String> {
    if cli.output.is_structured() {
        output::print(cli.output, &output::to_json(plan, "bettercompute.compute.v1.Plan"), &[]);
    } else {
        output::emit(&text(plan, terminal_width()));
    }
    match plan.effect.as_str() {
        "refused" => Err(refusal(plan)),
        _ => Ok(()),
    }
}

/// The error of a refused dry run: what the real call would answer, by field.
fn refusal(plan: &Plan) -> String {
    let reasons: Vec<String> = plan.violations.iter().map(|v| named(&v.field, &v.description)).collect();
    format!("the change would be refused ({}); nothing was changed", reasons.join("; "))
}

/// `field: text`, or the text alone for no field.
fn named(field: &str, text: &str) -> String {
    if field.is_empty() { text.to_owned() } else { format!("{field}: {text}") }
}

/// The columns of the terminal (see [`output::terminal_width`]), else 100.
pub(super) fn terminal_width() -> usize {
    output::terminal_width().filter(|&c| c >= 40).unwrap_or(100)
}

/// The plan as a diff, its lines wrapped at `width`: a header with the effect, `~` per changed
/// field, the provider objects, `!` per disruption, the quota effects and `x` per violation.
pub fn text(plan: &Plan, width: usize) -> String {
    let mut out = Vec::new();
    out.push(format!("plan: {} — nothing was changed", plan.effect));
    if plan.changes.is_empty() && plan.provider_objects.is_empty() && plan.violations.is_empty() {
        out.push("  (no field changes and the provider is asked nothing)".to_owned());
    }
    for change in &plan.changes {
        let value = |v: &str| if v.is_empty() { "(none)".to_owned() } else { v.to_owned() };
        let diff = format!("~ {}: {} -> {}", change.field, value(&change.from), value(&change.to));
        let why = match change.detail.as_str() {
            "" => format!("({})", change.effect),
            detail => format!("({}: {detail})", change.effect),
        };
        if diff.chars().count() + 2 + why.chars().count() <= width {
            out.push(format!("{diff}  {why}"));
        } else {
            out.extend(wrap(&diff, "    ", width));
            out.extend(wrap(&format!("    {why}"), "     ", width));
        }
    }
    if !plan.provider_objects.is_empty() {
        out.push("provider objects:".to_owned());
        for object in &plan.provider_objects {
            let line = format!("  {} {} {} {}", object.action, object.provider, object.kind, object.name);
            out.extend(wrap(&line, "      ", width));
        }
    }
    for disruption in &plan.disruptions {
        out.extend(wrap(&format!("! {disruption}"), "  ", width));
    }
    for quota in &plan.quota_effects {
        out.extend(wrap(&format!("quota: {quota}"), "  ", width));
    }
    for violation in &plan.violations {
        out.extend(wrap(&format!("x {}", named(&violation.field, &violation.description)), "  ", width));
    }
    out.iter().map(|line| format!("{line}\n")).collect()
}

/// `line` broken at spaces into lines of at most `width` columns (a word longer than that
/// stands alone), keeping its own indentation; the lines after the first start with `indent`.
fn wrap(line: &str, indent: &str, width: usize) -> Vec<String> {
    let body = line.trim_start_matches(' ');
    let mut current = line[..line.len() - body.len()].to_owned();
    let mut bare = true;
    let mut lines = Vec::new();
    for word in body.split(' ') {
        if !bare && current.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::replace(&mut current, indent.to_owned()));
            bare = true;
        }
        if !bare {
            current.push(' ');
        }
        current.push_str(word);
        bare = false;
    }
    lines.push(current);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::compute::{PlanChange, PlanProviderObject, PlanViolation};

    fn rolling() -> Plan {
        Plan {
            effect: "rolling".into(),
            changes: vec![PlanChange {
                field: "machineType".into(),
                from: "\"e2-standard-4\"".into(),
                to: "\"e2-standard-8\"".into(),
                effect: "rolling".into(),
                detail: "GKE recreates every node of pool general, one surge node at a time".into(),
            }],
            provider_objects: vec![PlanProviderObject {
                action: "update".into(),
                provider: "gke".into(),
                kind: "node pool".into(),
                name: "bc-k-0123456789abcdef/general".into(),
            }],
            disruptions: vec!["every node of pool general is drained and recreated".into()],
            ..Plan::default()
        }
    }

    #[test]
    fn a_plan_reads_like_a_diff() {
        let text = text(&rolling(), 200);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "plan: rolling — nothing was changed");
        assert_eq!(
            lines[1],
            "~ machineType: \"e2-standard-4\" -> \"e2-standard-8\"  (rolling: GKE recreates every node of pool \
             general, one surge node at a time)"
        );
        assert_eq!(
            lines[2..],
            [
                "provider objects:",
                "  update gke node pool bc-k-0123456789abcdef/general",
                "! every node of pool general is drained and recreated"
            ]
        );
    }

    #[test]
    fn a_narrow_terminal_wraps_the_detail_under_its_change() {
        let text = text(&rolling(), 60);
        assert!(text.lines().all(|line| line.chars().count() <= 60), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "~ machineType: \"e2-standard-4\" -> \"e2-standard-8\"");
        assert!(lines[2].starts_with("    (rolling: GKE recreates"), "{text}");
        assert!(lines[3].starts_with("     "), "{text}");
    }

    #[test]
    fn a_refused_plan_names_its_fields() {
        let plan = Plan {
            effect: "refused".into(),
            violations: vec![PlanViolation {
                code: "INVALID_INPUT".into(),
                field: "nodeCount".into(),
                description: "must be 0 to 1000".into(),
            }],
            ..Plan::default()
        };
        assert!(text(&plan, 80).contains("\nx nodeCount: must be 0 to 1000\n"));
        assert_eq!(refusal(&plan), "the change would be refused (nodeCount: must be 0 to 1000); nothing was changed");
    }
}
