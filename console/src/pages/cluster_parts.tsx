// The parts of a cluster's detail page: its node pools (add, change after a plan, remove), the kubeconfig
// download by role with its expiry (for those who may connect; a viewer is told why not), and its
// events as they happen.

import { useState } from "preact/hooks";
import type {
  KubernetesCluster,
  KubernetesNodePool,
} from "../../../clients/typescript/src/gen/bettercompute/compute/v1/kubernetes_pb.js";
import { useLive } from "../live.js";
import { usePlanGate } from "../plan.js";
import type { Page } from "../routes.js";
import { DeleteButton, Failure, Field, NONE, type Refusal, State, Table, Unplaced, When, idempotencyKey, refusal, toDate, useLoad } from "../ui.js";

/**
 * Changes one node pool: nodes per zone and machine type. The change is planned first: a rolling
 * one (a new machine type recreates every node) is confirmed in a dialog showing the plan, a
 * refused one shows its violations on the fields, and neither is sent until then.
 */
function ChangePool(props: { page: Page; pool: KubernetesNodePool; onDone: () => void }) {
  const { session, tenant } = props.page;
  const [count, setCount] = useState(String(props.pool.nodeCount));
  const [machineType, setMachineType] = useState(props.pool.machineType);
  const [problem, setProblem] = useState<Refusal>(NONE);
  const pools = session.client.kubernetesNodePools;
  const { gate, dialog } = usePlanGate(setProblem, (error) => setProblem(refusal(error)));
  const submit = (e: Event) => {
    e.preventDefault();
    const change = {
      tenantId: tenant,
      clusterId: props.pool.clusterId,
      nodePoolId: props.pool.id,
      nodeCount: Number(count),
      ...(machineType !== props.pool.machineType ? { machineType } : {}),
    };
    const send = () => pools.update(change).then(() => (setProblem(NONE), props.onDone()), (error) => setProblem(refusal(error)));
    gate(`Change node pool ${props.pool.name}?`, () => pools.plan({ change: { case: "update", value: change } }), send);
  };
  const label = (what: string) => `${what} of ${props.pool.name}`;
  return (
    <form class="inline" onSubmit={submit} aria-label={`Change node pool ${props.pool.name}`}>
      <Field label={label("Nodes per zone")} name="nodeCount" refusal={problem}>
        {(a) => <input {...a} type="number" min={0} max={1000} value={count} onInput={(e) => setCount(e.currentTarget.value)} />}
      </Field>
      <Field label={label("Machine type")} name="machineType" refusal={problem}>
        {(a) => <input {...a} type="text" size={14} value={machineType} onInput={(e) => setMachineType(e.currentTarget.value)} />}
      </Field>
      <button type="submit">Change</button>
      <Unplaced refusal={problem} placed={["nodeCount", "machineType"]} />
      {dialog}
    </form>
  );
}

/** Adds a node pool to a standard cluster. */
function AddPool(props: { page: Page; cluster: KubernetesCluster; onDone: () => void }) {
  const { session, tenant } = props.page;
  const [form, setForm] = useState({ name: "", machineType: "e2-standard-4", nodeCount: "1" });
  const [problem, setProblem] = useState<Refusal>(NONE);
  const submit = (e: Event) => {
    e.preventDefault();
    session.client.kubernetesNodePools
      .create({ tenantId: tenant, clusterId: props.cluster.id, ...form, nodeCount: Number(form.nodeCount), idempotencyKey: idempotencyKey() })
      .then(() => (setProblem(NONE), props.onDone()), (error) => setProblem(refusal(error)));
  };
  const input = (key: keyof typeof form, type = "text") => (a: object) => (
    <input {...a} type={type} value={form[key]} onInput={(e) => setForm({ ...form, [key]: e.currentTarget.value })} />
  );
  return (
    <form class="inline" onSubmit={submit} aria-label="Add a node pool">
      <Field label="New pool name" name="name" refusal={problem}>{input("name")}</Field>
      <Field label="Machine type" name="machineType" refusal={problem}>{input("machineType")}</Field>
      <Field label="Nodes per zone" name="nodeCount" refusal={problem}>{input("nodeCount", "number")}</Field>
      <button type="submit">Add node pool</button>
      <Unplaced refusal={problem} placed={["name", "machineType", "nodeCount"]} />
    </form>
  );
}

export function NodePools(props: { page: Page; cluster: KubernetesCluster; onChange: () => void }) {
  const { session, tenant, writable } = props.page;
  const c = props.cluster;
  if (c.mode === "autopilot") return <p>An autopilot cluster has no node pools: the provider runs its nodes.</p>;
  const live = c.state !== "deleting" && c.state !== "deleted";
  return (
    <section>
      <h2>Node pools</h2>
      <Table
        label="Node pools"
        rows={c.nodePools}
        columns={[
          { header: "Name", cell: (p) => p.name },
          { header: "State", cell: (p) => <State state={p.state} message={p.message} /> },
          { header: "Machine type", cell: (p) => p.machineType },
          { header: "Nodes", cell: (p) => `${p.currentNodeCount} (${p.nodeCount} per zone)` },
          { header: "Autoscaling", cell: (p) => (p.autoscaling ? `${p.autoscaling.minNodes}–${p.autoscaling.maxNodes}` : "off") },
          { header: "Zones", cell: (p) => p.zones.join(", ") || "—" },
          ...(writable && live
            ? [
                {
                  header: "Change",
                  cell: (p: KubernetesNodePool) =>
                    p.state === "deleting" ? null : (
                      <>
                        <ChangePool page={props.page} pool={p} onDone={props.onChange} />
                        {c.nodePools.length > 1 && (
                          <DeleteButton
                            what={`pool ${p.name}`}
                            plan={() =>
                              session.client.kubernetesNodePools.plan({
                                change: { case: "delete", value: { tenantId: tenant, clusterId: c.id, nodePoolId: p.id } },
                              })
                            }
                            onDelete={() =>
                              session.client.kubernetesNodePools
                                .delete({ tenantId: tenant, clusterId: c.id, nodePoolId: p.id })
                                .then(props.onChange)
                            }
                          />
                        )}
                      </>
                    ),
                },
              ]
            : []),
        ]}
      />
      {writable && live && <AddPool page={props.page} cluster={c} onDone={props.onChange} />}
    </section>
  );
}

/** A kubeconfig for a role, downloaded as a file; its token's expiry shown. */
export function Kubeconfig(props: { page: Page; cluster: KubernetesCluster }) {
  const { session, tenant } = props.page;
  const [role, setRole] = useState("view");
  const [issued, setIssued] = useState<string | null>(null);
  const [problem, setProblem] = useState<Refusal>(NONE);
  const download = () =>
    session.client.kubernetesClusters.credentials({ tenantId: tenant, clusterId: props.cluster.id, role }).then(
      (credentials) => {
        const url = URL.createObjectURL(new Blob([credentials.kubeconfig], { type: "application/yaml" }));
        const link = document.createElement("a");
        link.href = url;
        link.download = `${props.cluster.name}-${role}.kubeconfig`;
        link.click();
        setTimeout(() => URL.revokeObjectURL(url), 1000);
        setProblem(NONE);
        setIssued(`A ${credentials.role} kubeconfig, expires at ${toDate(credentials.expiresAt)?.toISOString()}`);
      },
      (error) => setProblem(refusal(error)),
    );
  if (!props.page.writable) {
    // `compute:kubernetes:connect` is an editor's or an admin's: a viewer's key would be refused.
    return (
      <section>
        <h2>Kubeconfig</h2>
        <p class="note" data-refused="role">
          A kubeconfig connects to the cluster, which is for the tenant's editors and admins: your role reads the cluster here but
          may not download one. Ask an admin of {props.page.tenantName} for the editor role if you need kubectl.
        </p>
      </section>
    );
  }
  return (
    <section>
      <h2>Kubeconfig</h2>
      <div class="inline">
        <Field label="Role" name="role" refusal={problem}>
          {(a) => (
            <select {...a} value={role} onChange={(e) => setRole(e.currentTarget.value)}>
              <option value="view">view</option>
              <option value="edit">edit</option>
              <option value="admin">admin</option>
            </select>
          )}
        </Field>
        <button type="button" onClick={download}>
          Download kubeconfig
        </button>
      </div>
      <Unplaced refusal={problem} placed={["role"]} />
      {issued && <p role="status">{issued}. It holds a bearer token: keep it private.</p>}
    </section>
  );
}

/** The cluster's events, newest first, as they happen. */
export function ClusterEvents(props: { page: Page; id: string }) {
  const { session, tenant, watcher } = props.page;
  const events = useLoad(() => session.client.events.list({ tenantId: tenant, subject: props.id, limit: 1000 }), [tenant, props.id]);
  useLive(watcher, [], events.reload, props.id);
  return (
    <section>
      <h2>Events</h2>
      <Failure error={events.error} />
      {events.data && (
        <Table
          label="Events"
          rows={[...events.data.events].reverse()}
          columns={[
            { header: "Type", cell: (e) => e.type },
            { header: "When", cell: (e) => <When time={e.time} /> },
          ]}
        />
      )}
    </section>
  );
}
