// A pool's substrate: the managed Kubernetes cluster its policy makes or adopts, each flavor's
// node pool with its nodes (asked for, run by the provider, joined), the hosted join token and
// its rotation, the objects applied to the cluster and the substrate's messages. Nothing here is
// created or deleted: the pool's policy makes the substrate, and archiving the pool ends it.

import type { Event } from "../../../clients/typescript/src/gen/bettercompute/compute/v1/events_pb.js";
import type { JoinToken } from "../../../clients/typescript/src/gen/bettercompute/compute/v1/join_tokens_pb.js";
import type { KubernetesSubstrate } from "../../../clients/typescript/src/gen/bettercompute/compute/v1/kubernetes_substrates_pb.js";
import { type Watcher, useLive } from "../live.js";
import { type PoolChoice, PoolName, eventTenant, usePool, usePoolWatcher } from "../pools.js";
import type { Page } from "../routes.js";
import { Facts, Failure, State, Table, When, toDate, useLoad } from "../ui.js";

/** The label the substrate gives each node of a flavor, naming the flavor. */
export const FLAVOR_LABEL = "better-compute.dev/flavor";

/** Who made the tokens a substrate hosts. */
const HOSTED_BY = "reconciler:";

/** How long before its expiry the reconciler replaces a hosted token, unless configured otherwise. */
const RENEW_BEFORE_MS = 2 * 86_400_000;

export function Substrates(props: { page: Page }) {
  const { page } = props;
  const chosen = usePool(page);
  const { id: pool, picker } = chosen;
  const client = page.session.client;
  const substrate = useLoad(() => (pool ? client.kubernetesSubstrates.list({ poolId: pool }) : Promise.resolve(null)), [pool]);
  const watcher = usePoolWatcher(page, chosen.pool);
  // Every change of the substrate, its tokens and its nodes is an event on the pool's subject.
  useLive(watcher, [], substrate.reload, pool || undefined);
  const s = substrate.data?.substrates[0];
  return (
    <section>
      <h1>Substrates</h1>
      {picker}
      <Failure error={substrate.error} />
      {substrate.data && !s && (
        <p class="empty">
          This pool has no substrate: its policy names none. An operator gives a pool one with a <code>substrate</code> in its
          policy (a GKE account and the cluster to make or adopt, and its flavors).
        </p>
      )}
      {s && chosen.pool && <Substrate page={page} pool={chosen.pool} substrate={s} watcher={watcher} />}
    </section>
  );
}

/** What the parts of a substrate's page are given. */
interface Parts {
  page: Page;
  pool: PoolChoice;
  substrate: KubernetesSubstrate;
  /** The stream of the pool's events. */
  watcher: Watcher | null;
}

function Substrate(props: Parts) {
  const { substrate: s } = props;
  const joined = s.flavors.reduce((sum, f) => sum + Number(f.joinedNodes), 0);
  return (
    <>
      <h2>
        Cluster {s.clusterName} <State state={s.state} message={s.message} />
      </h2>
      {s.state === "error" && <p class="problem">{s.message}</p>}
      <Facts
        items={[
          ["Pool", <PoolName page={props.page} id={s.poolId} />],
          ["Cluster", s.mode === "adopt" ? `${s.clusterName} (adopted)` : `${s.clusterName} (made for the pool)`],
          ["Account", <code>{s.accountId}</code>],
          ["Location", s.location],
          ["Endpoint", s.endpoint],
          ["Versions", s.masterVersion && `control plane ${s.masterVersion}, nodes ${s.nodeVersion || "—"}`],
          ["Nodes joined", <a href={`#/nodes/${s.poolId}`}>{joined} in the pool's nodes</a>],
          ["Recorded", <When time={s.createdAt} />],
          ["Changed", <When time={s.updatedAt} />],
          ...(s.deletedAt ? [["Torn down", <When time={s.deletedAt} />] as [string, preact.ComponentChildren]] : []),
        ]}
      />
      <h2>Flavors</h2>
      <Table
        label="Flavors"
        rows={s.flavors}
        empty="No flavor: the policy names none."
        columns={[
          { header: "Flavor", cell: (f) => f.name },
          { header: "Node pool", cell: (f) => <code>{f.nodePool}</code> },
          { header: "State", cell: (f) => <State state={f.state} /> },
          { header: "Desired", cell: (f) => String(f.desiredNodes) },
          { header: "At the provider", cell: (f) => String(f.providerNodes) },
          { header: "Joined", cell: (f) => String(f.joinedNodes) },
        ]}
      />
      <HostedToken {...props} />
      <h2>Objects on the cluster</h2>
      <Table
        label="Objects on the cluster"
        rows={s.objects}
        empty="None applied yet: they are applied once the cluster and its node pools are there."
        columns={[
          { header: "Kind", cell: (o) => o.kind },
          { header: "Namespace", cell: (o) => o.namespace || "—" },
          { header: "Name", cell: (o) => <code>{o.name}</code> },
        ]}
      />
      <Messages {...props} />
    </>
  );
}

/** The token the substrate's daemons join with (never its secret), and the ones it replaced. */
function HostedToken(props: Parts) {
  const { page, substrate: s } = props;
  const tokens = useLoad(() => page.session.client.joinTokens.list({ poolId: s.poolId }), [s.poolId]);
  useLive(props.watcher, [], tokens.reload, s.poolId);
  const hosted = (tokens.data?.joinTokens ?? []).filter((t) => t.createdBy.startsWith(HOSTED_BY));
  const current = hosted.find((t) => t.id === s.joinTokenId);
  const expires = toDate(current?.expiresAt);
  const renewal = expires && new Date(expires.getTime() - RENEW_BEFORE_MS);
  return (
    <>
      <h2>Join token</h2>
      <Failure error={tokens.error} />
      {!s.joinTokenId ? (
        <p class="empty">None yet: the substrate makes one once its cluster is there, and keeps it in a Secret on the cluster.</p>
      ) : (
        <Facts
          items={[
            ["Token", <code>{s.joinTokenId}</code>],
            ["State", current ? <State state={current.state} /> : "—"],
            ["Made", <When time={current?.createdAt} />],
            ["Expires", <When time={current?.expiresAt} />],
            ["Joins", current ? String(current.uses) : "—"],
            [
              "Rotation",
              renewal
                ? `replaced two days before it expires (around ${renewal.toISOString().slice(0, 16).replace("T", " ")} UTC); the token it replaces is revoked ten minutes later`
                : "—",
            ],
          ]}
        />
      )}
      {hosted.length > 1 && (
        <Table
          label="Hosted join tokens"
          rows={hosted}
          columns={[
            { header: "Token", cell: (t: JoinToken) => <code>{t.id}</code> },
            { header: "State", cell: (t: JoinToken) => <State state={t.state} /> },
            { header: "Made", cell: (t: JoinToken) => <When time={t.createdAt} /> },
            { header: "Revoked", cell: (t: JoinToken) => <When time={t.revokedAt} /> },
            { header: "Joins", cell: (t: JoinToken) => String(t.uses) },
          ]}
        />
      )}
    </>
  );
}

/** The substrate's events, newest first, with the state and the message each recorded. */
function Messages(props: Parts) {
  const { page, pool } = props;
  const tenant = eventTenant(pool);
  const events = useLoad(
    () => page.session.client.events.list({ tenantId: tenant, subject: pool.id, typePrefix: "kubernetes.substrate.", limit: 1000 }),
    [tenant, pool.id],
  );
  useLive(props.watcher, ["kubernetes.substrate."], events.reload);
  const field = (e: Event, key: string) => String(e.data?.[key] ?? "");
  return (
    <>
      <h2>Messages</h2>
      <Failure error={events.error} />
      {events.data && (
        <Table
          label="Messages"
          rows={[...events.data.events].reverse()}
          empty="No event yet."
          columns={[
            { header: "When", cell: (e) => <When time={e.time} /> },
            { header: "Event", cell: (e) => e.type.replace("kubernetes.substrate.", "") },
            { header: "State", cell: (e) => <State state={field(e, "state")} /> },
            { header: "Message", cell: (e) => field(e, "message") || "—" },
          ]}
        />
      )}
    </>
  );
}
