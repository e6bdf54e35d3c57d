// The create forms of load balancers, networks, instances, certificates and volumes. Each sends what was
// typed as it is and shows the API's refusal on the field that `details.fields` names: the
// server's rules are the only ones, the form repeats none of them.

import { useState } from "preact/hooks";
import type { Page } from "../routes.js";
import { Field, NONE, type Refusal, Unplaced, idempotencyKey, refusal, useLoad } from "../ui.js";

/** A form's state: its values, its refusal, and a submit that goes to the new resource's page. */
function useCreate<F extends Record<string, string>>(initial: F, path: string, call: (form: F) => Promise<{ id: string }>) {
  const [form, setForm] = useState(initial);
  const [problem, setProblem] = useState<Refusal>(NONE);
  const [busy, setBusy] = useState(false);
  const submit = (e: Event) => {
    e.preventDefault();
    setBusy(true);
    call(form)
      .then((made) => (location.hash = `#/${path}/${made.id}`), (error) => setProblem(refusal(error)))
      .finally(() => setBusy(false));
  };
  // An input or a select of the form's `key`, whose refusal is the one of `path` (the key itself
  // unless the request nests it: `forwarding[0].entryPort`).
  const text = (key: keyof F & string, label: string, more: { hint?: string; path?: string; type?: string } = {}) => (
    <Field label={label} name={more.path ?? key} refusal={problem} hint={more.hint}>
      {(a) => <input {...a} type={more.type ?? "text"} value={form[key]} onInput={(e) => setForm({ ...form, [key]: e.currentTarget.value })} />}
    </Field>
  );
  const choice = (key: keyof F & string, label: string, options: [string, string][], path?: string) => (
    <Field label={label} name={path ?? key} refusal={problem}>
      {(a) => (
        <select {...a} value={form[key] || options[0]?.[0]} onChange={(e) => setForm({ ...form, [key]: e.currentTarget.value })}>
          {options.map(([value, text]) => (
            <option value={value}>{text}</option>
          ))}
        </select>
      )}
    </Field>
  );
  return { form, setForm, problem, busy, submit, text, choice };
}

/**
 * The tenant's pools that offer `capability` as select options, the regions of the chosen one,
 * and the pool and region a form means (the first of each until another is chosen).
 */
function usePools(page: Page, capability: string) {
  const pools = useLoad(() => page.session.client.computePools.list({ tenantId: page.tenant }), [page.tenant]);
  const usable = (pools.data?.pools ?? []).filter((p) => p.capabilities.includes(capability));
  const chosen = (form: { poolId: string; region: string }) => {
    const poolId = form.poolId || usable[0]?.id || "";
    const regions = usable.find((p) => p.id === poolId)?.regions ?? [];
    return { poolId, region: form.region || regions[0] || "", regions: regions.map((r): [string, string] => [r, r]) };
  };
  return { options: usable.map((p): [string, string] => [p.id, `${p.name} (${p.provider})`]), chosen };
}

function Submit(props: { busy: boolean; label: string }) {
  return (
    <button type="submit" disabled={props.busy}>
      {props.label}
    </button>
  );
}

/** Comma- or space-separated entries as a list. */
function entries(text: string): string[] {
  return text.split(/[\s,]+/).filter(Boolean);
}

/** The tenant's certificates in `pool` as select options, "none" first. */
function useCertificates(page: Page, pool: string): [string, string][] {
  const list = useLoad(() => page.session.client.certificates.list({ tenantId: page.tenant }), [page.tenant]);
  const inPool = (list.data?.certificates ?? []).filter((c) => c.poolId === pool && c.state !== "deleted");
  return [["", "none"], ...inPool.map((c): [string, string] => [c.id, `${c.name} (${c.dnsNames.join(", ") || c.type})`])];
}

export function LoadBalancerForm(props: { page: Page }) {
  const { page } = props;
  const pools = usePools(page, "load-balancers");
  const f = useCreate(
    {
      name: "",
      poolId: "",
      scope: "regional",
      region: "",
      entryProtocol: "http",
      entryPort: "80",
      targetProtocol: "http",
      targetPort: "8080",
      certificateId: "",
      checkProtocol: "",
      checkPort: "8080",
      checkPath: "/",
      cookieName: "",
      cookieTtl: "300",
      allow: "",
      deny: "",
      redirect: "",
      domains: "",
      domainCertificateId: "",
    },
    "loadbalancers",
    (form) => {
      const { poolId, region } = pools.chosen(form);
      const rule = {
        entryProtocol: form.entryProtocol,
        entryPort: Number(form.entryPort),
        targetProtocol: form.targetProtocol,
        targetPort: Number(form.targetPort),
        certificateId: form.certificateId,
      };
      const global = form.scope === "global";
      return page.session.client.loadBalancers.create({
        tenantId: page.tenant,
        poolId,
        name: form.name,
        scope: form.scope,
        region: global ? "" : region,
        targets: { pool: !global },
        forwarding: [rule],
        ...(form.checkProtocol
          ? { healthCheck: { protocol: form.checkProtocol, port: Number(form.checkPort), path: form.checkProtocol === "tcp" ? "" : form.checkPath } }
          : {}),
        ...(form.cookieName ? { stickySessions: { cookieName: form.cookieName, ttlSeconds: Number(form.cookieTtl) } } : {}),
        ...(form.allow || form.deny ? { sourceRanges: { allow: entries(form.allow), deny: entries(form.deny) } } : {}),
        redirectHttpToHttps: form.redirect === "yes",
        domains: global ? entries(form.domains).map((name) => ({ name, certificateId: form.domainCertificateId })) : [],
        idempotencyKey: idempotencyKey(),
      });
    },
  );
  const certificates = useCertificates(page, pools.chosen(f.form).poolId);
  const protocols: [string, string][] = ["http", "https", "http2", "tcp", "udp"].map((p) => [p, p]);
  const rule = (field: string) => `forwarding[0].${field}`;
  const ports = "1 to 65535";
  const global = f.form.scope === "global";
  return (
    <form onSubmit={f.submit} noValidate>
      {f.text("name", "Name", { hint: "1 to 40 characters: lowercase letters, digits and dashes" })}
      {f.choice("poolId", "Pool", pools.options)}
      {f.choice("scope", "Scope", [["regional", "regional (over this region's instances)"], ["global", "global (over regional ones)"]])}
      {!global && f.choice("region", "Region", pools.chosen(f.form).regions)}
      <fieldset>
        <legend>Forwarding rule (targets: every instance of the pool in the region)</legend>
        <div class="row">
          {f.choice("entryProtocol", "Entry protocol", protocols, rule("entryProtocol"))}
          {f.text("entryPort", "Entry port", { hint: ports, path: rule("entryPort"), type: "number" })}
          {f.choice("targetProtocol", "Target protocol", protocols, rule("targetProtocol"))}
          {f.text("targetPort", "Target port", { hint: ports, path: rule("targetPort"), type: "number" })}
        </div>
        {(f.form.entryProtocol === "https" || f.form.entryProtocol === "http2") &&
          f.choice("certificateId", "Certificate", certificates, rule("certificateId"))}
      </fieldset>
      <fieldset>
        <legend>Health check</legend>
        <div class="row">
          {f.choice("checkProtocol", "Check protocol", [["", "the provider's default"], ["http", "http"], ["https", "https"], ["tcp", "tcp"]], "healthCheck.protocol")}
          {f.form.checkProtocol && f.text("checkPort", "Check port", { hint: ports, path: "healthCheck.port", type: "number" })}
          {f.form.checkProtocol && f.form.checkProtocol !== "tcp" && f.text("checkPath", "Check path", { path: "healthCheck.path" })}
        </div>
      </fieldset>
      <fieldset>
        <legend>Sticky sessions</legend>
        <div class="row">
          {f.text("cookieName", "Cookie name", { hint: "Empty: no sticky sessions", path: "stickySessions.cookieName" })}
          {f.form.cookieName && f.text("cookieTtl", "Cookie lifetime (s)", { hint: "1 to 604800", path: "stickySessions.ttlSeconds", type: "number" })}
        </div>
      </fieldset>
      <fieldset>
        <legend>Firewall</legend>
        {f.text("allow", "Allowed sources", { hint: "IPv4 CIDRs, comma-separated; empty: anyone", path: "sourceRanges.allow" })}
        {f.text("deny", "Denied sources", { hint: "IPv4 CIDRs, comma-separated", path: "sourceRanges.deny" })}
        {f.choice("redirect", "HTTP to HTTPS", [["", "not redirected"], ["yes", "redirected"]], "redirectHttpToHttps")}
      </fieldset>
      {global && (
        <fieldset>
          <legend>Domains</legend>
          {f.text("domains", "Domain names", { hint: "Comma-separated: www.example.com", path: "domains" })}
          {f.choice("domainCertificateId", "Domain certificate", certificates, "domains[0].certificateId")}
        </fieldset>
      )}
      <Unplaced
        refusal={f.problem}
        placed={[
          "name",
          "poolId",
          "scope",
          "region",
          ...["entryProtocol", "entryPort", "targetProtocol", "targetPort", "certificateId"].map(rule),
          "healthCheck.protocol",
          "healthCheck.port",
          "healthCheck.path",
          "stickySessions.cookieName",
          "stickySessions.ttlSeconds",
          "sourceRanges.allow",
          "sourceRanges.deny",
          "redirectHttpToHttps",
          "domains",
          "domains[0].certificateId",
        ]}
      />
      <Submit busy={f.busy} label="Create load balancer" />
    </form>
  );
}

export function NetworkForm(props: { page: Page }) {
  const { page } = props;
  const pools = usePools(page, "networks");
  const f = useCreate({ name: "", poolId: "", description: "", subnetName: "main", region: "", ipRange: "10.10.0.0/24" }, "networks", (form) => {
    const { poolId, region } = pools.chosen(form);
    return page.session.client.networks.create({
      tenantId: page.tenant,
      poolId,
      name: form.name,
      description: form.description,
      subnets: [{ name: form.subnetName, region, ipRange: form.ipRange }],
      idempotencyKey: idempotencyKey(),
    });
  });
  return (
    <form onSubmit={f.submit} noValidate>
      {f.text("name", "Name")}
      {f.choice("poolId", "Pool", pools.options)}
      {f.text("description", "Description")}
      <fieldset>
        <legend>First subnet (a VPC in its region)</legend>
        {f.text("subnetName", "Subnet name", { path: "subnets[0].name" })}
        {f.choice("region", "Region", pools.chosen(f.form).regions, "subnets[0].region")}
        {f.text("ipRange", "IP range", { hint: "An IPv4 CIDR", path: "subnets[0].ipRange" })}
      </fieldset>
      <Unplaced refusal={f.problem} placed={["name", "poolId", "description", "subnets[0].name", "subnets[0].region", "subnets[0].ipRange"]} />
      <Submit busy={f.busy} label="Create network" />
    </form>
  );
}

export function InstanceForm(props: { page: Page }) {
  const { page } = props;
  const pools = usePools(page, "instances");
  const f = useCreate({ name: "", poolId: "", region: "", size: "s-1vcpu-1gb", image: "ubuntu-24-04-x64", subnetId: "" }, "instances", (form) => {
    const { poolId, region } = pools.chosen(form);
    const { name, size, image, subnetId } = form;
    return page.session.client.instances.create({ tenantId: page.tenant, poolId, region, name, size, image, subnetId, idempotencyKey: idempotencyKey() });
  });
  return (
    <form onSubmit={f.submit} noValidate>
      {f.text("name", "Name")}
      {f.choice("poolId", "Pool", pools.options)}
      {f.choice("region", "Region", pools.chosen(f.form).regions)}
      {f.text("size", "Size", { hint: "A size slug: s-1vcpu-1gb" })}
      {f.text("image", "Image", { hint: "An image slug: ubuntu-24-04-x64" })}
      {f.text("subnetId", "Subnet id", { hint: "snet_... of one of your networks in the region; empty for none" })}
      <Unplaced refusal={f.problem} placed={["name", "poolId", "region", "size", "image", "subnetId"]} />
      <Submit busy={f.busy} label="Create instance" />
    </form>
  );
}

export function VolumeForm(props: { page: Page }) {
  const { page } = props;
  const pools = usePools(page, "volumes");
  const f = useCreate({ name: "", poolId: "", region: "", sizeGigabytes: "10", filesystemType: "", description: "" }, "volumes", (form) => {
    const { poolId, region } = pools.chosen(form);
    const { name, filesystemType, description } = form;
    const sizeGigabytes = Number(form.sizeGigabytes);
    return page.session.client.volumes.create({ tenantId: page.tenant, poolId, region, name, sizeGigabytes, filesystemType, description, idempotencyKey: idempotencyKey() });
  });
  return (
    <form onSubmit={f.submit} noValidate>
      {f.text("name", "Name")}
      {f.choice("poolId", "Pool", pools.options)}
      {f.choice("region", "Region", pools.chosen(f.form).regions)}
      {f.text("sizeGigabytes", "Size (GiB)", { type: "number", hint: "1 to 16384; a volume only grows" })}
      {f.choice("filesystemType", "Filesystem", [["", "unformatted"], ["ext4", "ext4"], ["xfs", "xfs"]])}
      {f.text("description", "Description")}
      <Unplaced refusal={f.problem} placed={["name", "poolId", "region", "sizeGigabytes", "filesystemType", "description"]} />
      <Submit busy={f.busy} label="Create volume" />
    </form>
  );
}

export function CertificateForm(props: { page: Page }) {
  const { page } = props;
  const pools = usePools(page, "certificates");
  const f = useCreate(
    { name: "", poolId: "", type: "letsEncrypt", dnsNames: "", privateKey: "", leafCertificate: "", certificateChain: "" },
    "certificates",
    (form) =>
      page.session.client.certificates.create({
        tenantId: page.tenant,
        poolId: pools.chosen({ poolId: form.poolId, region: "" }).poolId,
        name: form.name,
        type: form.type,
        dnsNames: form.type === "letsEncrypt" ? form.dnsNames.split(/[\s,]+/).filter(Boolean) : [],
        privateKey: form.privateKey,
        leafCertificate: form.leafCertificate,
        certificateChain: form.certificateChain,
        idempotencyKey: idempotencyKey(),
      }),
  );
  const pem = (key: "privateKey" | "leafCertificate" | "certificateChain", label: string) => (
    <Field label={label} name={key} refusal={f.problem} hint="PEM">
      {(a) => <textarea {...a} rows={4} value={f.form[key]} onInput={(e) => f.setForm({ ...f.form, [key]: e.currentTarget.value })} />}
    </Field>
  );
  return (
    <form onSubmit={f.submit} noValidate>
      {f.text("name", "Name")}
      {f.choice("poolId", "Pool", pools.options)}
      {f.choice("type", "Type", [["letsEncrypt", "Let's Encrypt (issued for DNS names)"], ["custom", "custom (your PEM files)"]])}
      {f.form.type === "letsEncrypt" ? (
        f.text("dnsNames", "DNS names", { hint: "Comma-separated: www.example.com, example.com" })
      ) : (
        <>
          {pem("privateKey", "Private key (encrypted at rest, never shown again)")}
          {pem("leafCertificate", "Leaf certificate")}
          {pem("certificateChain", "Certificate chain")}
        </>
      )}
      <Unplaced refusal={f.problem} placed={["name", "poolId", "type", "dnsNames", "privateKey", "leafCertificate", "certificateChain"]} />
      <Submit busy={f.busy} label="Create certificate" />
    </form>
  );
}
