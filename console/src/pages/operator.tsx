// For operators: the audit trail of a tenant, each decision on a mutation with who called (by
// name), the call, the resource it was about (by name, linked to its page where the console has
// one), the decision and how the call then ended: an allowed call can still fail.

import type { AuditEvent } from "../../../clients/typescript/src/gen/bettercompute/platform/v1/audit_pb.js";
import { poolName } from "../pools.js";
import type { Page } from "../routes.js";
import { Failure, Table, When, useLoad } from "../ui.js";
import { allClusters } from "./clusters.js";

/** A resource type as the audit page says it, and the console's section for it, if any. */
const TYPES: Record<string, [string, string | null]> = {
  "compute-kubernetes-cluster": ["cluster", "clusters"],
  "compute-kubernetes-node-pool": ["node pool", null],
  "compute-provider-load-balancer": ["load balancer", "loadbalancers"],
  "compute-network": ["network", "networks"],
  "compute-instance": ["instance", "instances"],
  "compute-certificate": ["certificate", "certificates"],
  "compute-volume": ["volume", "volumes"],
  "compute-pool": ["pool", null],
  "compute-tenant": ["tenant", null],
};

/** The names of the tenant's resources (deleted ones too), by id. */
function useResourceNames(page: Page) {
  const { session, tenant } = page;
  const c = session.client;
  return useLoad(async () => {
    const all = { tenantId: tenant, includeDeleted: true };
    const lists = await Promise.allSettled([
      allClusters(session, tenant, true),
      c.loadBalancers.list(all).then((l) => l.loadBalancers),
      c.networks.list(all).then((l) => l.networks),
      c.instances.list(all).then((l) => l.instances),
      c.certificates.list(all).then((l) => l.certificates),
      c.volumes.list(all).then((l) => l.volumes),
    ]);
    const names = new Map<string, string>();
    for (const list of lists) {
      if (list.status === "fulfilled") for (const r of list.value) names.set(r.id, r.name);
    }
    return names;
  }, [tenant]);
}

/** `bettercompute.compute.v1.KubernetesClusters/Delete` as `KubernetesClusters.Delete`. */
function call(method: string): string {
  return (method.split(".").pop() ?? method).replace("/", ".");
}

/** How the call ended: `OK`, or the error code it answered. */
function Outcome(props: { outcome: string }) {
  if (!props.outcome) return <span class="muted">—</span>;
  const tone = props.outcome === "OK" ? "good" : "bad";
  return <span class={`state ${tone}`}>{props.outcome === "OK" ? "succeeded" : props.outcome}</span>;
}

export function Audit(props: { page: Page }) {
  const { page } = props;
  const { session, tenant } = page;
  const audit = useLoad(() => session.client.audit.list({ tenantId: tenant, limit: 200 }), [tenant]);
  const names = useResourceNames(page);
  const resource = (a: AuditEvent) => {
    const [kind, section] = TYPES[a.resourceType] ?? [a.resourceType.replace(/^(compute|platform)-/, "").replaceAll("-", " "), null];
    if (!a.resourceId) return `a new ${kind}`;
    // A pool's id names it whatever the decision was on (an offer is decided on its pool).
    const name = a.resourceId.startsWith("pool_") ? poolName(page, a.resourceId) : (names.data?.get(a.resourceId) ?? a.resourceId);
    const shown = name === a.resourceId ? <code>{name}</code> : name;
    return (
      <span title={a.resourceId}>
        {kind} {section ? <a href={`#/${section}/${a.resourceId}`}>{shown}</a> : shown}
      </span>
    );
  };
  return (
    <section>
      <h1>Audit trail of {page.tenantName}</h1>
      <Failure error={audit.error} />
      {audit.data && (
        <Table
          label="Audit events"
          rows={audit.data.auditEvents}
          columns={[
            { header: "When", cell: (a) => <When time={a.time} /> },
            { header: "Who", cell: (a) => <span title={a.principalId}>{a.principalName || <code>{a.principalId}</code>}</span> },
            { header: "Call", cell: (a) => <span title={a.method}>{call(a.method)}</span> },
            { header: "Resource", cell: resource },
            { header: "Decision", cell: (a) => <span class={`state ${a.decision === "allow" ? "good" : "bad"}`}>{a.decision}</span> },
            { header: "Outcome", cell: (a) => <Outcome outcome={a.outcome} /> },
          ]}
        />
      )}
    </section>
  );
}
