// Kubernetes clusters: the list with live state, the create form with its node pools, and the
// detail page (why it is stuck, node pools, kubeconfig, operation log, events).

import { useState } from "preact/hooks";
import type { KubernetesCluster } from "../../../clients/typescript/src/gen/bettercompute/compute/v1/kubernetes_pb.js";
import { useLive } from "../live.js";
import { Operations, ProblemPanel, sameProblem } from "../problem.js";
import { PoolName } from "../pools.js";
import type { Page } from "../routes.js";
import type { Session } from "../session.js";
import { DeleteButton, Facts, Failure, State, Table, When, useLoad } from "../ui.js";
import { ClusterEvents, Kubeconfig, NodePools } from "./cluster_parts.js";
import { ClusterForm } from "./cluster_form.js";

/** Event types that change what a cluster page shows. */
export const CLUSTER_EVENTS = ["kubernetes.cluster.", "kubernetes.nodepool."];

/** Nodes of a cluster: its pools' live counts, else the counts asked for. */
function nodes(cluster: KubernetesCluster): number {
  return cluster.nodePools.reduce((sum, p) => sum + (p.currentNodeCount || p.nodeCount || 0), 0);
}

/** Every cluster of the tenant (deleted ones too when asked), the list followed page by page. */
export async function allClusters(session: Session, tenantId: string, includeDeleted = false): Promise<KubernetesCluster[]> {
  const clusters: KubernetesCluster[] = [];
  let pageToken = "";
  do {
    const page = await session.client.kubernetesClusters.list({ tenantId, includeDeleted, pageToken });
    clusters.push(...page.clusters);
    pageToken = page.nextPageToken;
  } while (pageToken);
  return clusters;
}

export function ClusterList(props: { page: Page }) {
  const { session, tenant, watcher, writable } = props.page;
  const list = useLoad(async () => ({ clusters: await allClusters(session, tenant) }), [tenant]);
  useLive(watcher, CLUSTER_EVENTS, list.reload);
  return (
    <section>
      <div class="heading">
        <h1>Clusters</h1>
        {writable && (
          <a class="button" href="#/clusters/new">
            Create cluster
          </a>
        )}
      </div>
      <Failure error={list.error} />
      {list.data && (
        <Table
          label="Clusters"
          rows={list.data.clusters}
          columns={[
            { header: "Name", cell: (c) => <a href={`#/clusters/${c.id}`}>{c.name}</a> },
            { header: "State", cell: (c) => <State state={c.state} message={c.message} /> },
            { header: "Location", cell: (c) => c.location },
            { header: "Nodes", cell: nodes },
            { header: "Version", cell: (c) => c.kubernetesVersion || "—" },
            { header: "Id", cell: (c) => <code>{c.id}</code> },
            { header: "Age", cell: (c) => <When time={c.createdAt} /> },
          ]}
        />
      )}
    </section>
  );
}

export function ClusterCreate(props: { page: Page }) {
  return (
    <section>
      <h1>Create a cluster</h1>
      <ClusterForm page={props.page} />
    </section>
  );
}

export function ClusterDetail(props: { page: Page; id: string }) {
  const { session, tenant, watcher, writable } = props.page;
  const [gone, setGone] = useState(false);
  const cluster = useLoad(
    () => session.client.kubernetesClusters.get({ tenantId: tenant, clusterId: props.id }),
    [tenant, props.id],
  );
  useLive(watcher, [], cluster.reload, props.id);
  const c = cluster.data;
  return (
    <section>
      <p>
        <a href="#/clusters">← Clusters</a>
      </p>
      <Failure error={cluster.error} />
      {c && (
        <>
          <div class="heading">
            <h1>
              Cluster {c.name} <State state={c.state} message={c.message} />
            </h1>
            {writable && c.state !== "deleting" && c.state !== "deleted" && !gone && (
              <DeleteButton
                what="cluster"
                plan={() => session.client.kubernetesClusters.plan({ change: { case: "delete", value: { tenantId: tenant, clusterId: c.id } } })}
                onDelete={() =>
                  session.client.kubernetesClusters.delete({ tenantId: tenant, clusterId: c.id }).then(() => {
                    setGone(true);
                    cluster.reload();
                  })
                }
              />
            )}
          </div>
          <ProblemPanel
            problem={c.problem}
            also={c.nodePools.filter((p) => sameProblem(p.problem, c.problem)).map((p) => `node pool ${p.name}`)}
          />
          {c.nodePools
            .filter((p) => !sameProblem(p.problem, c.problem))
            .map((p) => (
              <ProblemPanel problem={p.problem} what={`node pool ${p.name}`} />
            ))}
          {c.state === "error" && <p class="problem">{c.message}</p>}
          <Facts
            items={[
              ["Id", <code>{c.id}</code>],
              ["Mode", c.mode],
              ["Location", c.location],
              ["Release channel", c.releaseChannel],
              ["Kubernetes version", c.kubernetesVersion],
              ["Endpoint", c.endpoint],
              ["Pool", <PoolName page={props.page} id={c.poolId} />],
              ["Network", c.networkId],
              ["Authorized networks", c.authorizedNetworks.join(", ") || "any address"],
              ["Private nodes", c.privateNodes ? "yes" : "no"],
              ["Description", c.description],
              ["Created", <When time={c.createdAt} />],
            ]}
          />
          <NodePools page={props.page} cluster={c} onChange={cluster.reload} />
          {c.state === "ready" || c.state === "updating" ? <Kubeconfig page={props.page} cluster={c} /> : null}
          <Operations page={props.page} tenant={tenant} id={c.id} />
          <ClusterEvents page={props.page} id={c.id} />
        </>
      )}
    </section>
  );
}
