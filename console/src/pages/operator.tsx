// For operators: the audit trail of decisions on mutations.

import type { Page } from "../routes.js";
import { Failure, Table, When, useLoad } from "../ui.js";

export function Audit(props: { page: Page }) {
  const { session, tenant } = props.page;
  const audit = useLoad(() => session.client.audit.list({ tenantId: tenant, limit: 200 }), [tenant]);
  return (
    <section>
      <h1>Audit trail of {tenant}</h1>
      <Failure error={audit.error} />
      {audit.data && (
        <Table
          label="Audit events"
          rows={audit.data.auditEvents}
          columns={[
            { header: "When", cell: (a) => <When time={a.time} /> },
            { header: "Principal", cell: (a) => <code>{a.principalId}</code> },
            // `bettercompute.compute.v1.KubernetesClusters/Delete` reads as its last two parts.
            { header: "Method", cell: (a) => <span title={a.method}>{a.method.split(".").pop()}</span> },
            { header: "Resource", cell: (a) => `${a.resourceType} ${a.resourceId}` },
            { header: "Decision", cell: (a) => <span class={a.decision === "allow" ? "good" : "bad"}>{a.decision}</span> },
          ]}
        />
      )}
    </section>
  );
}
