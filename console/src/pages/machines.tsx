// Machines that join pools: join tokens (the bearer form shown once, with the `bcd join` line
// to copy) and the nodes that joined, per pool, with a way to the pool's substrate when one
// brought them.

import { useState } from "preact/hooks";
import type { JoinToken } from "../../../clients/typescript/src/gen/bettercompute/compute/v1/join_tokens_pb.js";
import { useLive } from "../live.js";
import type { Page } from "../routes.js";
import { usePool, usePoolWatcher } from "../pools.js";
import { FLAVOR_LABEL } from "./substrates.js";
import { DeleteButton, Failure, Field, NONE, type Refusal, State, Table, Unplaced, When, idempotencyKey, refusal, useLoad } from "../ui.js";

/** A new token's bearer form, shown this once, and the line that joins a machine with it. */
function Issued(props: { token: JoinToken }) {
  if (!props.token.token) return <p role="status">{props.token.tokenNotice}</p>;
  // Over plain HTTP bcd sends the token only when told it is plaintext.
  const plaintext = location.protocol === "http:" ? " --insecure-plaintext" : "";
  const line = `bcd join --endpoint ${location.origin}${plaintext} --token ${props.token.token}`;
  return (
    <div class="issued" role="status">
      <p>The token, shown this once (copy it now):</p>
      <pre>
        <code>{props.token.token}</code>
      </pre>
      <p>On each machine to join, as root, run:</p>
      <pre>
        <code>{line}</code>
      </pre>
      <button type="button" onClick={() => navigator.clipboard?.writeText(line)}>
        Copy the command
      </button>
    </div>
  );
}

export function JoinTokens(props: { page: Page }) {
  const { page } = props;
  const chosen = usePool(page);
  const { id: pool, picker } = chosen;
  const tokens = useLoad(() => (pool ? page.session.client.joinTokens.list({ poolId: pool }) : Promise.resolve(null)), [pool]);
  useLive(usePoolWatcher(page, chosen.pool), ["compute.joinToken."], tokens.reload);
  const [form, setForm] = useState({ description: "", maxUses: "1" });
  const [problem, setProblem] = useState<Refusal>(NONE);
  const [issued, setIssued] = useState<JoinToken | null>(null);
  const create = (e: Event) => {
    e.preventDefault();
    page.session.client.joinTokens
      .create({ poolId: pool, description: form.description, maxUses: Number(form.maxUses), idempotencyKey: idempotencyKey() })
      .then((token) => (setIssued(token), setProblem(NONE), tokens.reload()), (error) => setProblem(refusal(error)));
  };
  return (
    <section>
      <h1>Join tokens</h1>
      {picker}
      {page.writable && pool && (
        <form class="inline" onSubmit={create} aria-label="Create a join token">
          <Field label="Description" name="description" refusal={problem}>
            {(a) => <input {...a} value={form.description} onInput={(e) => setForm({ ...form, description: e.currentTarget.value })} />}
          </Field>
          <Field label="Most uses" name="maxUses" refusal={problem}>
            {(a) => <input {...a} type="number" value={form.maxUses} onInput={(e) => setForm({ ...form, maxUses: e.currentTarget.value })} />}
          </Field>
          <button type="submit">Create join token</button>
          <Unplaced refusal={problem} placed={["description", "maxUses"]} />
        </form>
      )}
      {issued && <Issued token={issued} />}
      <Failure error={tokens.error} />
      {tokens.data && (
        <Table
          label="Join tokens"
          rows={tokens.data.joinTokens}
          columns={[
            { header: "Id", cell: (t) => <code>{t.id}</code> },
            { header: "State", cell: (t) => <State state={t.state} /> },
            { header: "Description", cell: (t) => t.description },
            { header: "Uses", cell: (t) => (t.maxUses ? `${t.uses}/${t.maxUses}` : t.uses) },
            { header: "Expires", cell: (t) => <When time={t.expiresAt} /> },
            ...(page.writable
              ? [{ header: "", cell: (t: JoinToken) => t.state === "active" && <DeleteButton verb="Revoke" what="token" onDelete={() => page.session.client.joinTokens.revoke({ poolId: pool, joinTokenId: t.id }).then(tokens.reload)} /> }]
              : []),
          ]}
        />
      )}
    </section>
  );
}

export function Nodes(props: { page: Page }) {
  const { page } = props;
  const chosen = usePool(page);
  const { id: pool, picker } = chosen;
  const nodes = useLoad(() => (pool ? page.session.client.nodes.list({ poolId: pool }) : Promise.resolve(null)), [pool]);
  const substrate = useLoad(() => (pool ? page.session.client.kubernetesSubstrates.list({ poolId: pool }) : Promise.resolve(null)), [pool]);
  const watcher = usePoolWatcher(page, chosen.pool);
  useLive(watcher, ["compute.node."], nodes.reload);
  useLive(watcher, ["kubernetes.substrate."], substrate.reload);
  const from = substrate.data?.substrates.find((s) => s.state !== "deleted");
  const act = (call: Promise<unknown>) => call.then(nodes.reload, nodes.reload);
  return (
    <section>
      <h1>Nodes</h1>
      {picker}
      {from && (
        <p class="note">
          The pool's substrate, cluster <code>{from.clusterName}</code> <State state={from.state} message={from.message} />, brings its nodes:{" "}
          <a href={`#/substrates/${pool}`}>see its flavors and join token</a>.
        </p>
      )}
      <Failure error={nodes.error} />
      {nodes.data && (
        <Table
          label="Nodes"
          rows={nodes.data.nodes}
          empty="No machine joined this pool yet: create a join token and run its bcd join line on the machine."
          columns={[
            {
              header: "Node",
              cell: (n) => (
                <>
                  <span class="hostname">{n.hostname}</span>
                  <br />
                  <code class="muted">{n.id}</code>
                </>
              ),
            },
            ...(from ? [{ header: "Flavor", cell: (n: (typeof nodes.data.nodes)[number]) => n.labels[FLAVOR_LABEL] ?? "—" }] : []),
            { header: "State", cell: (n) => <State state={n.state} /> },
            { header: "Cordoned", cell: (n) => (n.cordoned ? "yes" : "no") },
            { header: "CPUs", cell: (n) => (n.capacity ? Number(n.capacity.cpuMillis) / 1000 : "—") },
            { header: "Heartbeat", cell: (n) => <When time={n.lastHeartbeatAt} /> },
            ...(page.writable
              ? [
                  {
                    header: "",
                    cell: (n: (typeof nodes.data.nodes)[number]) => (
                      <>
                        <button type="button" onClick={() => act(n.cordoned ? page.session.client.nodes.uncordon({ poolId: pool, nodeId: n.id }) : page.session.client.nodes.cordon({ poolId: pool, nodeId: n.id }))}>
                          {n.cordoned ? "Uncordon" : "Cordon"}
                        </button>
                        <DeleteButton what="node" onDelete={() => page.session.client.nodes.delete({ poolId: pool, nodeId: n.id }).then(nodes.reload)} />
                      </>
                    ),
                  },
                ]
              : []),
          ]}
        />
      )}
    </section>
  );
}
