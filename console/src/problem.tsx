// Why a resource is stuck: the panel of its view's `problem` (what kind of failure, in the
// provider's words, since when, how many attempts and when the next comes) and its operation log,
// the provider and BMC calls the worker made for it, newest first, a page at a time.

import { useEffect, useState } from "preact/hooks";
import type { Operation, Problem } from "../../clients/typescript/src/gen/bettercompute/compute/v1/operations_pb.js";
import { type Watcher, useLive } from "./live.js";
import type { Page } from "./routes.js";
import { ApiError } from "./session.js";
import { Failure, Table, When, useLoad } from "./ui.js";

export type { Operation, Problem };

/** What each class means to the person reading it, as docs/problems.md's table says it. */
const MEANING: Record<string, string> = {
  retryable: "The provider failed or did not answer in time",
  throttled: "The provider asked us to slow down",
  quota: "The account's quota at the provider is spent",
  permission: "The provider refused the account's credentials",
  invalid: "The provider refused the request",
  conflict: "Another operation holds the object",
  notFound: "The object is not at the provider",
  unreachable: "The provider does not answer",
  needsHuman: "Nothing the system can retry",
};

/** The classes the worker stops retrying fast on: a person must act. */
const FOR_A_PERSON = ["permission", "invalid", "needsHuman"];

/** `1 failed attempt`, `3 failed attempts`. */
function attempts(count: bigint): string {
  return `${count} failed attempt${count === 1n ? "" : "s"}`;
}

/** Whether two problems say the same: a cluster's refused call refuses its node pools' passes too. */
export function sameProblem(a: Problem | undefined, b: Problem | undefined): boolean {
  return !!a && !!b && a.class === b.class && a.message === b.message;
}

/**
 * The panel of a view's `problem`, or nothing while the resource's passes succeed. `what` names
 * the resource when the page shows more than one (a cluster's node pools); `also` names the
 * others whose problem is the same, said once here rather than in a panel each.
 */
export function ProblemPanel(props: { problem: Problem | undefined; what?: string; also?: string[] }) {
  const p = props.problem;
  if (!p) return null;
  const title = props.what ? `Problem of ${props.what}` : "Problem";
  const waits = FOR_A_PERSON.includes(p.class);
  const also = props.also ?? [];
  return (
    <section class="stuck" aria-label={title} data-class={p.class}>
      <p class="stuck-title">
        <span class="badge">{p.class}</span> <strong>{MEANING[p.class] ?? "The provider's calls fail"}</strong>
        {props.what && <span class="muted"> ({props.what})</span>}
        {also.length > 0 && <span class="muted"> (also {also.join(", ")})</span>}
      </p>
      <p class="stuck-message">{p.message}</p>
      <p class="stuck-when">
        Failing since <When time={p.since} /> · {attempts(p.attempts)} ·{" "}
        {p.nextAttemptAt ? (
          <>
            next attempt <When time={p.nextAttemptAt} />
            {waits && " (or at the next change)"}
          </>
        ) : (
          "no attempt planned"
        )}
      </p>
    </section>
  );
}

/** A call's duration: `4 ms`, `1.2 s`. */
function duration(ms: bigint): string {
  const n = Number(ms);
  return n < 1000 ? `${n} ms` : `${(n / 1000).toFixed(1)} s`;
}

/** A call's outcome, coloured by what it means (and said in words). */
function Outcome(props: { outcome: string }) {
  const tone = props.outcome === "ok" ? "good" : props.outcome === "error" ? "bad" : "gone";
  return <span class={`state ${tone}`}>{props.outcome}</span>;
}

/** The calls a page shows: the newest page, the older ones asked for, and where the next begins. */
interface Log {
  operations: Operation[];
  next: string;
}

/** How many calls a page of the log holds. */
const PAGE_SIZE = 20;

/**
 * The resource's operation log, newest first, reloaded on its events; "More" asks for the next
 * older page. `tenant` is the tenant the resource is under (a machine's: its pool's).
 */
export function Operations(props: { page: Page; tenant: string; id: string; watcher?: Watcher | null }) {
  const { session } = props.page;
  const list = (pageToken: string) =>
    session.client.operations.list({ tenantId: props.tenant, resourceId: props.id, pageSize: PAGE_SIZE, pageToken });
  const newest = useLoad(() => list(""), [props.tenant, props.id]);
  useLive(props.watcher === undefined ? props.page.watcher : props.watcher, [], newest.reload, props.id);
  const [log, setLog] = useState<Log | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  useEffect(() => {
    // A reload starts over from the newest calls: older pages asked for before are dropped.
    if (newest.data) setLog({ operations: newest.data.operations, next: newest.data.nextPageToken });
  }, [newest.data]);
  const more = () =>
    log &&
    list(log.next).then(
      (page) => (setError(null), setLog({ operations: [...log.operations, ...page.operations], next: page.nextPageToken })),
      (failure) => setError(ApiError.from(failure)),
    );
  return (
    <section>
      <h2>Operations</h2>
      <Failure error={newest.error ?? error} />
      {log && (
        <>
          <Table
            label="Operations"
            rows={log.operations}
            empty="No provider calls yet"
            columns={[
              { header: "Call", cell: (o) => <code>{o.call}</code> },
              { header: "When", cell: (o) => <When time={o.time} /> },
              { header: "Duration", cell: (o) => duration(o.durationMs) },
              { header: "Outcome", cell: (o) => <Outcome outcome={o.outcome} /> },
              { header: "Error class", cell: (o) => o.errorClass || "—" },
              { header: "Provider operation", cell: (o) => (o.providerOperationId ? <code class="hostname">{o.providerOperationId}</code> : "—") },
              { header: "Message", cell: (o) => <span class="operation-message">{o.message || "—"}</span> },
            ]}
          />
          {log.next && (
            <p>
              <button type="button" onClick={more}>
                More
              </button>
            </p>
          )}
        </>
      )}
    </section>
  );
}
