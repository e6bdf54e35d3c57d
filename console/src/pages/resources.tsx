// Load balancers, networks, instances, certificates and volumes: one list, detail (with why it is
// stuck and its operation log) and delete for the five, each kind saying how it is listed, fetched,
// deleted and shown, and which form creates it.

import type { ComponentChildren, FunctionComponent } from "preact";
import { useLive } from "../live.js";
import type { Plan } from "../plan.js";
import { Operations, type Problem, ProblemPanel } from "../problem.js";
import { PoolName } from "../pools.js";
import type { Page } from "../routes.js";
import { type Column, DeleteButton, Facts, Failure, State, Table, When, useLoad } from "../ui.js";
import { CertificateForm, InstanceForm, LoadBalancerForm, NetworkForm, VolumeForm } from "./resource_forms.js";

/** What the kinds have alike. */
export interface Resource {
  id: string;
  name: string;
  state: string;
  message: string;
  poolId: string;
  /** Why its passes keep failing; absent while they do not. */
  problem?: Problem;
  createdAt?: { seconds: bigint; nanos: number };
}

/** A kind of resource as these pages show it. */
export interface Kind {
  /** Its fragment: `#/loadbalancers`. */
  path: string;
  title: string;
  singular: string;
  /** The event type prefix of its changes. */
  events: string;
  list: (page: Page) => Promise<Resource[]>;
  get: (page: Page, id: string) => Promise<Resource>;
  remove: (page: Page, id: string) => Promise<unknown>;
  /** The plan of its delete. */
  planRemove: (page: Page, id: string) => Promise<Plan>;
  /** The columns after name and state. */
  columns: Column<any>[];
  /** What the detail page shows after the common fields; `named` shows another resource by name. */
  facts: (resource: any, named: (id: string) => ComponentChildren) => [string, ComponentChildren][];
  /** The names of the resources its detail page refers to, by id. */
  related?: (page: Page) => Promise<Map<string, string>>;
  form: FunctionComponent<{ page: Page }>;
}

/** `30 s`, `2 h`, `1 d` as a duration reads. */
function seconds(n: number): string {
  return n % 86400 === 0 ? `${n / 86400} d` : n % 3600 === 0 ? `${n / 3600} h` : n % 60 === 0 ? `${n / 60} min` : `${n} s`;
}

/** The health check in force, every setting said. */
function healthCheck(h: any): string {
  if (!h) return "the provider's default";
  const path = h.protocol === "tcp" ? "" : ` ${h.path || "/"}`;
  const every = h.intervalSeconds ? `every ${h.intervalSeconds} s` : "at the provider's default interval";
  const timeout = h.timeoutSeconds ? `, timeout ${h.timeoutSeconds} s` : "";
  const healthy = h.healthyThreshold ? `, in after ${h.healthyThreshold} passes` : "";
  const unhealthy = h.unhealthyThreshold ? `, out after ${h.unhealthyThreshold} failures` : "";
  return `${h.protocol} on port ${h.port}${path}, ${every}${timeout}${healthy}${unhealthy}`;
}

/** Who may reach it. */
function firewall(ranges: any): string {
  const allow: string[] = ranges?.allow ?? [];
  const deny: string[] = ranges?.deny ?? [];
  if (!allow.length && !deny.length) return "open to anyone";
  return [allow.length ? `allows only ${allow.join(", ")}` : "", deny.length ? `denies ${deny.join(", ")}` : ""].filter(Boolean).join("; ");
}

/** The certificates its rules and domains name. */
function certificates(r: any): string[] {
  return [...new Set<string>([...r.forwarding.map((f: any) => f.certificateId), ...r.domains.map((d: any) => d.certificateId)].filter(Boolean))];
}

const c = (page: Page) => page.session.client;
const t = (page: Page) => page.tenant;

export const KINDS: Kind[] = [
  {
    path: "loadbalancers",
    title: "Load balancers",
    singular: "load balancer",
    events: "providerLoadBalancer.",
    list: (p) => c(p).loadBalancers.list({ tenantId: t(p) }).then((l) => l.loadBalancers),
    get: (p, id) => c(p).loadBalancers.get({ tenantId: t(p), loadBalancerId: id }),
    remove: (p, id) => c(p).loadBalancers.delete({ tenantId: t(p), loadBalancerId: id }),
    planRemove: (p, id) => c(p).loadBalancers.plan({ change: { case: "delete", value: { tenantId: t(p), loadBalancerId: id } } }),
    columns: [
      { header: "Scope", cell: (r) => r.scope },
      { header: "Region", cell: (r) => r.region || "—" },
      { header: "Address", cell: (r) => r.address || "—" },
    ],
    facts: (r, named) => [
      ["Scope", r.scope],
      ["Region", r.region],
      ["Address", [r.address, r.addressV6].filter(Boolean).join(", ")],
      ["Subnet", r.subnetId ? named(r.subnetId) : "the account's default network"],
      [
        "Forwarding",
        <ul class="plain">
          {r.forwarding.map((f: any) => (
            <li>
              {f.entryProtocol}:{f.entryPort} → {f.targetProtocol}:{f.targetPort}
              {f.certificateId && <> with certificate {named(f.certificateId)}</>}
              {f.tlsPassthrough && " (TLS passed through)"}
            </li>
          ))}
        </ul>,
      ],
      ["Health check", healthCheck(r.healthCheck)],
      ["Sticky sessions", r.stickySessions ? `by cookie ${r.stickySessions.cookieName}, kept ${seconds(r.stickySessions.ttlSeconds)}` : "none"],
      ["Firewall", firewall(r.sourceRanges)],
      ["HTTP to HTTPS", r.redirectHttpToHttps ? "redirected" : "not redirected"],
      [
        "Certificates",
        certificates(r).length ? <span>{certificates(r).map((id, i) => <>{i > 0 && ", "}{named(id)}</>)}</span> : "none",
      ],
      [
        "Domains",
        r.domains.length ? (
          <ul class="plain">
            {r.domains.map((d: any) => (
              <li>
                {d.name}
                {d.certificateId && <> with certificate {named(d.certificateId)}</>}
              </li>
            ))}
          </ul>
        ) : r.scope === "global" ? "none" : "none (only a global load balancer serves domains)",
      ],
      [
        "Targets",
        r.targets?.pool ? "every instance of the pool in the region" : <span>{[...(r.targets?.instanceIds ?? []), ...(r.targets?.loadBalancerIds ?? [])].map((id, i) => <>{i > 0 && ", "}{named(id)}</>)}</span>,
      ],
      ["Reaches", r.reachedIds.length ? <span>{r.reachedIds.map((id: string, i: number) => <>{i > 0 && ", "}{named(id)}</>)}</span> : "nothing yet"],
    ],
    related: async (p) => {
      const all = { tenantId: t(p) };
      const [certs, instances, lbs] = await Promise.all([
        c(p).certificates.list(all),
        c(p).instances.list(all),
        c(p).loadBalancers.list(all),
      ]);
      return new Map([...certs.certificates, ...instances.instances, ...lbs.loadBalancers].map((x) => [x.id, x.name]));
    },
    form: LoadBalancerForm,
  },
  {
    path: "networks",
    title: "Networks",
    singular: "network",
    events: "network.",
    list: (p) => c(p).networks.list({ tenantId: t(p) }).then((l) => l.networks),
    get: (p, id) => c(p).networks.get({ tenantId: t(p), networkId: id }),
    remove: (p, id) => c(p).networks.delete({ tenantId: t(p), networkId: id }),
    planRemove: (p, id) => c(p).networks.plan({ change: { case: "delete", value: { tenantId: t(p), networkId: id } } }),
    columns: [{ header: "Subnets", cell: (r) => r.subnets.map((s: any) => `${s.name} (${s.region} ${s.ipRange})`).join(", ") }],
    facts: (r) => [
      ["Description", r.description],
      ["Subnets", r.subnets.map((s: any) => `${s.name}: ${s.region} ${s.ipRange} ${s.state} (${s.id})`).join("; ")],
    ],
    form: NetworkForm,
  },
  {
    path: "instances",
    title: "Instances",
    singular: "instance",
    events: "instance.",
    list: (p) => c(p).instances.list({ tenantId: t(p) }).then((l) => l.instances),
    get: (p, id) => c(p).instances.get({ tenantId: t(p), instanceId: id }),
    remove: (p, id) => c(p).instances.delete({ tenantId: t(p), instanceId: id }),
    planRemove: (p, id) => c(p).instances.plan({ change: { case: "delete", value: { tenantId: t(p), instanceId: id } } }),
    columns: [
      { header: "Region", cell: (r) => r.region },
      { header: "Size", cell: (r) => r.size },
      { header: "Public IPv4", cell: (r) => r.publicIpv4 || "—" },
    ],
    facts: (r) => [
      ["Region", r.region],
      ["Size", r.size],
      ["Image", r.image],
      ["Subnet", r.subnetId],
      ["Public IPv4", r.publicIpv4],
      ["Private IPv4", r.privateIpv4],
    ],
    form: InstanceForm,
  },
  {
    path: "certificates",
    title: "Certificates",
    singular: "certificate",
    events: "certificate.",
    list: (p) => c(p).certificates.list({ tenantId: t(p) }).then((l) => l.certificates),
    get: (p, id) => c(p).certificates.get({ tenantId: t(p), certificateId: id }),
    remove: (p, id) => c(p).certificates.delete({ tenantId: t(p), certificateId: id }),
    planRemove: (p, id) => c(p).certificates.plan({ change: { case: "delete", value: { tenantId: t(p), certificateId: id } } }),
    columns: [
      { header: "Type", cell: (r) => r.type },
      { header: "Names", cell: (r) => r.dnsNames.join(", ") },
      { header: "Expires", cell: (r) => <When time={r.notAfter} /> },
    ],
    facts: (r) => [
      ["Type", r.type],
      ["DNS names", r.dnsNames.join(", ")],
      ["Not after", <When time={r.notAfter} />],
      ["SHA-256", <code>{r.sha256Fingerprint}</code>],
    ],
    form: CertificateForm,
  },
  {
    path: "volumes",
    title: "Volumes",
    singular: "volume",
    events: "volume.",
    list: (p) => c(p).volumes.list({ tenantId: t(p) }).then((l) => l.volumes),
    get: (p, id) => c(p).volumes.get({ tenantId: t(p), volumeId: id }),
    remove: (p, id) => c(p).volumes.delete({ tenantId: t(p), volumeId: id }),
    planRemove: (p, id) => c(p).volumes.plan({ change: { case: "delete", value: { tenantId: t(p), volumeId: id } } }),
    columns: [
      { header: "Region", cell: (r) => r.region },
      { header: "Size", cell: (r) => `${r.sizeGigabytes} GiB` },
      { header: "Instance", cell: (r) => r.instanceId || "—" },
    ],
    facts: (r) => [
      ["Description", r.description],
      ["Region", r.region],
      ["Size", `${r.sizeGigabytes} GiB`],
      ["Filesystem", r.filesystemType || "unformatted"],
      ["Instance", r.instanceId],
      ["Attached to machine", r.attachedMachineId],
    ],
    form: VolumeForm,
  },
];

export function ResourceList(props: { page: Page; kind: Kind }) {
  const { page, kind } = props;
  const list = useLoad(() => kind.list(page), [page.tenant, kind.path]);
  useLive(page.watcher, [kind.events], list.reload);
  return (
    <section>
      <div class="heading">
        <h1>{kind.title}</h1>
        {page.writable && (
          <a class="button" href={`#/${kind.path}/new`}>
            Create {kind.singular}
          </a>
        )}
      </div>
      <Failure error={list.error} />
      {list.data && (
        <Table
          label={kind.title}
          rows={list.data}
          columns={[
            { header: "Name", cell: (r: Resource) => <a href={`#/${kind.path}/${r.id}`}>{r.name}</a> },
            { header: "State", cell: (r: Resource) => <State state={r.state} message={r.message} /> },
            ...kind.columns,
            { header: "Id", cell: (r: Resource) => <code>{r.id}</code> },
            { header: "Age", cell: (r: Resource) => <When time={r.createdAt} /> },
          ]}
        />
      )}
    </section>
  );
}

export function ResourceDetail(props: { page: Page; kind: Kind; id: string }) {
  const { page, kind, id } = props;
  const one = useLoad(() => kind.get(page, id), [page.tenant, id]);
  useLive(page.watcher, [], one.reload, id);
  const related = useLoad(() => (kind.related ? kind.related(page) : Promise.resolve(new Map<string, string>())), [page.tenant, id]);
  const named = (ref: string) => {
    const name = related.data?.get(ref);
    return name ? <span title={ref}>{name}</span> : <code>{ref}</code>;
  };
  const r = one.data;
  return (
    <section>
      <p>
        <a href={`#/${kind.path}`}>← {kind.title}</a>
      </p>
      <Failure error={one.error} />
      {r && (
        <>
          <div class="heading">
            <h1>
              {kind.singular[0].toUpperCase() + kind.singular.slice(1)} {r.name} <State state={r.state} message={r.message} />
            </h1>
            {page.writable && r.state !== "deleting" && r.state !== "deleted" && (
              <DeleteButton what={kind.singular} plan={() => kind.planRemove(page, id)} onDelete={() => kind.remove(page, id).then(one.reload)} />
            )}
          </div>
          <ProblemPanel problem={r.problem} />
          {r.state === "error" && <p class="problem">{r.message}</p>}
          <Facts items={[["Id", <code>{r.id}</code>], ["Pool", <PoolName page={page} id={r.poolId} />], ...kind.facts(r, named), ["Created", <When time={r.createdAt} />]]} />
          <Operations page={page} tenant={page.tenant} id={r.id} />
        </>
      )}
    </section>
  );
}

export function ResourceCreate(props: { page: Page; kind: Kind }) {
  const Form = props.kind.form;
  return (
    <section>
      <p>
        <a href={`#/${props.kind.path}`}>← {props.kind.title}</a>
      </p>
      <h1>Create a {props.kind.singular}</h1>
      <Form page={props.page} />
    </section>
  );
}
