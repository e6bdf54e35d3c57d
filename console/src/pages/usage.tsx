// A tenant's usage over the last two weeks, day by day (UTC), as a bar chart per meter with its
// dates, a value axis in the meter's unit and the meter's name in words; and, for operators, who
// set them, the tenant's budgets against this month's spend. Its viewers, editors and admins
// read the usage (`compute:usage:read`); budgets are the platform's (`platform:budgets:read`).

import type { Page } from "../routes.js";
import { isPlatformAdmin } from "../session.js";
import { Failure, Table, toDate, useLoad } from "../ui.js";

/** Days shown, ending with today (UTC). */
const DAYS = 14;
const DAY_MS = 86_400_000;

/** What a meter measures, in words, and the unit of its quantities. */
const METERS: Record<string, { title: string; unit: string }> = {
  "kubernetes.cluster.hours": { title: "Kubernetes clusters", unit: "cluster-hours" },
  "vps.load-balancer.hours": { title: "Load balancers", unit: "load-balancer-hours" },
};

/** A meter's title and unit; an unknown one is named as it is, in hours of its resource. */
export function meterInWords(meter: string): { title: string; unit: string } {
  return METERS[meter] ?? { title: meter, unit: meter.endsWith(".hours") ? "hours" : "units" };
}

/** A time as the request's timestamp. */
function stamp(ms: number) {
  return { seconds: BigInt(Math.floor(ms / 1000)), nanos: 0 };
}

/** A UTC day as the axis writes it: `Dec 6`. */
function day(ms: number): string {
  return new Date(ms).toLocaleDateString("en-US", { month: "short", day: "numeric", timeZone: "UTC" });
}

/** Quantities summed per day (oldest first) for each meter. */
function perDay(records: { meter: string; hour?: { seconds: bigint; nanos: number }; quantity: bigint | number }[], start: number) {
  const meters = new Map<string, number[]>();
  for (const r of records) {
    const index = Math.floor(((toDate(r.hour)?.getTime() ?? start) - start) / DAY_MS);
    if (index < 0 || index >= DAYS) continue;
    const row = meters.get(r.meter) ?? new Array(DAYS).fill(0);
    row[index] += Number(r.quantity);
    meters.set(r.meter, row);
  }
  return meters;
}

/** Round steps for the value axis: 1, 2 or 5 times a power of ten, four or fewer to the top. */
function ticks(top: number): number[] {
  const rough = Math.max(1, top) / 4;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? rough;
  const count = Math.ceil(Math.max(1, top) / step);
  return Array.from({ length: count + 1 }, (_, i) => i * step);
}

/** The chart's frame, in the SVG's own units. */
const CHART = { left: 56, right: 12, top: 12, bottom: 44, slot: 44, height: 180 };

/** One meter's daily totals as bars over dated days, with a value axis in its unit. */
function Chart(props: { meter: string; days: number[]; start: number }) {
  const { title, unit } = meterInWords(props.meter);
  const axis = ticks(Math.max(...props.days));
  const top = axis[axis.length - 1];
  const width = CHART.left + DAYS * CHART.slot + CHART.right;
  const base = CHART.top + CHART.height;
  const y = (q: number) => base - (q / top) * CHART.height;
  const total = props.days.reduce((a, b) => a + b, 0);
  const label = props.days.map((q, i) => `${day(props.start + i * DAY_MS)}: ${q}`).join(", ");
  return (
    <figure class="usage">
      <figcaption>
        <strong>{title}</strong> <span class="muted">({props.meter})</span>: {total.toLocaleString("en-US")} {unit} in {DAYS} days
      </figcaption>
      <svg role="img" aria-label={`${title}, ${unit} per day: ${label}`} viewBox={`0 0 ${width} ${base + CHART.bottom}`} class="chart">
        {axis.map((q) => (
          <g class="tick">
            <line x1={CHART.left} x2={width - CHART.right} y1={y(q)} y2={y(q)} class={q === 0 ? "baseline" : "grid"} />
            <text x={CHART.left - 6} y={y(q) + 4} text-anchor="end">
              {q.toLocaleString("en-US")}
            </text>
          </g>
        ))}
        <text class="unit" transform={`translate(14 ${CHART.top + CHART.height / 2}) rotate(-90)`} text-anchor="middle">
          {unit} per day
        </text>
        {props.days.map((q, i) => {
          const x = CHART.left + i * CHART.slot;
          const date = props.start + i * DAY_MS;
          return (
            <g>
              {q > 0 && <rect x={x + 6} y={y(q)} width={CHART.slot - 12} height={base - y(q)} />}
              {q > 0 && (
                <text x={x + CHART.slot / 2} y={y(q) - 4} text-anchor="middle" class="value">
                  {q}
                </text>
              )}
              <text x={x + CHART.slot / 2} y={base + 16} text-anchor="middle" class="date">
                {day(date)}
              </text>
            </g>
          );
        })}
        <text x={CHART.left + (DAYS * CHART.slot) / 2} y={base + 38} text-anchor="middle" class="unit">
          day (UTC)
        </text>
      </svg>
    </figure>
  );
}

export function Usage(props: { page: Page }) {
  const { session, tenant } = props.page;
  const end = Math.ceil(Date.now() / DAY_MS) * DAY_MS;
  const start = end - DAYS * DAY_MS;
  const usage = useLoad(() => session.client.usage.list({ tenantId: tenant, start: stamp(start), end: stamp(end) }), [tenant]);
  const operator = isPlatformAdmin(session.identity);
  const meters = perDay(usage.data?.usage ?? [], start);
  return (
    <section>
      <h1>Usage of {props.page.tenantName}</h1>
      <p class="muted">
        Each resource that bills is counted once for every hour it existed in; the bars add up each day's hours, {day(start)} to{" "}
        {day(end - DAY_MS)}.
      </p>
      <Failure error={usage.error} />
      {usage.data && meters.size === 0 && <p class="empty">No usage in the last {DAYS} days.</p>}
      {[...meters].map(([meter, days]) => (
        <Chart meter={meter} days={days} start={start} />
      ))}
      {operator ? <Budgets page={props.page} /> : <p class="note">Budgets and prices are set by the platform's operators.</p>}
    </section>
  );
}

/** The tenant's budgets against this month's spend, for operators. */
function Budgets(props: { page: Page }) {
  const { session, tenant } = props.page;
  const budgets = useLoad(() => session.client.budgets.list({ tenantId: tenant }), [tenant]);
  return (
    <>
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
                  {String(b.monthSpend)} of {String(b.monthlyLimit)} units
                </>
              ),
            },
          ]}
        />
      )}
    </>
  );
}
