// For operators: the tenant's usage over the last days against its budgets, as a chart, and the
// audit trail of decisions on mutations.

import type { Page } from "../routes.js";
import { Failure, Table, When, toDate, useLoad } from "../ui.js";

const DAYS = 14;

/** A time as the request's timestamp. */
function stamp(ms: number) {
  return { seconds: BigInt(Math.floor(ms / 1000)), nanos: 0 };
}

/** Quantities summed per day (oldest first) for each meter. */
function perDay(records: { meter: string; hour?: { seconds: bigint; nanos: number }; quantity: bigint | number }[], start: number) {
  const meters = new Map<string, number[]>();
  for (const r of records) {
    const day = Math.floor(((toDate(r.hour)?.getTime() ?? start) - start) / 86_400_000);
    if (day < 0 || day >= DAYS) continue;
    const row = meters.get(r.meter) ?? new Array(DAYS).fill(0);
    row[day] += Number(r.quantity);
    meters.set(r.meter, row);
  }
  return meters;
}

/** Bars of one meter's daily totals, with the numbers as the chart's text alternative. */
function Bars(props: { meter: string; days: number[]; start: number }) {
  const top = Math.max(1, ...props.days);
  const width = 24;
  const label = props.days
    .map((q, i) => `${new Date(props.start + i * 86_400_000).toISOString().slice(5, 10)}: ${q}`)
    .join(", ");
  return (
    <figure>
      <figcaption>{props.meter} per day</figcaption>
      <svg role="img" aria-label={`${props.meter} per day: ${label}`} viewBox={`0 0 ${DAYS * width} 110`} class="chart">
        {props.days.map((q, i) => {
          // The tallest bar leaves room above it for its figure.
          const h = (q / top) * 80;
          return (
            <g>
              <rect x={i * width + 3} y={95 - h} width={width - 6} height={h} />
              {q > 0 && (
                <text x={i * width + width / 2} y={92 - h} text-anchor="middle">
                  {q}
                </text>
              )}
            </g>
          );
        })}
        <line x1="0" x2={DAYS * width} y1="95" y2="95" />
      </svg>
    </figure>
  );
}

export function Usage(props: { page: Page }) {
  const { session, tenant } = props.page;
  const end = Math.ceil(Date.now() / 86_400_000) * 86_400_000;
  const start = end - DAYS * 86_400_000;
  const usage = useLoad(() => session.client.usage.list({ tenantId: tenant, start: stamp(start), end: stamp(end) }), [tenant]);
  const budgets = useLoad(() => session.client.budgets.list({ tenantId: tenant }), [tenant]);
  const meters = perDay(usage.data?.usage ?? [], start);
  return (
    <section>
      <h1>Usage of {tenant}</h1>
      <Failure error={usage.error} />
      {usage.data && meters.size === 0 && <p class="empty">No usage in the last {DAYS} days.</p>}
      {[...meters].map(([meter, days]) => (
        <Bars meter={meter} days={days} start={start} />
      ))}
      <h2>Budgets</h2>
      <Failure error={budgets.error} />
      {budgets.data && (
        <Table
          label="Budgets"
          rows={budgets.data.budgets}
          empty="No budget."
          columns={[
            { header: "Name", cell: (b) => b.name },
            {
              header: "This month",
              cell: (b) => (
                <>
                  <meter min={0} max={Number(b.monthlyLimit)} value={Number(b.monthSpend)} aria-label={`${b.name}: spent of limit`} />{" "}
                  {String(b.monthSpend)} of {String(b.monthlyLimit)}
                </>
              ),
            },
          ]}
        />
      )}
    </section>
  );
}

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
