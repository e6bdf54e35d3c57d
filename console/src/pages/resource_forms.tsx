// The create forms of load balancers, networks, instances and certificates. Each sends what was
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
  const text = (key: keyof F & string, label: string, hint?: string) => (
    <Field label={label} name={key} refusal={problem} hint={hint}>
      {(a) => <input {...a} value={form[key]} onInput={(e) => setForm({ ...form, [key]: e.currentTarget.value })} />}
    </Field>
  );
  const choice = (key: keyof F & string, label: string, options: [string, string][]) => (
    <Field label={label} name={key} refusal={problem}>
      {(a) => (
        <select {...a} value={form[key]} onChange={(e) => setForm({ ...form, [key]: e.currentTarget.value })}>
          {options.map(([value, text]) => (
            <option value={value}>{text}</option>
          ))}
        </select>
      )}
    </Field>
  );
  return { form, setForm, problem, busy, submit, text, choice };
}

/** The tenant's pools that offer `capability`, as select options, and the regions of each. */
function usePools(page: Page, capability: string) {
  const pools = useLoad(() => page.session.client.computePools.list({ tenantId: page.tenant }), [page.tenant]);
  const usable = (pools.data?.pools ?? []).filter((p) => p.capabilities.includes(capability));
  return {
    options: usable.map((p): [string, string] => [p.id, `${p.name} (${p.provider})`]),
    regions: (poolId: string) => usable.find((p) => p.id === poolId)?.regions ?? usable[0]?.regions ?? [],
    first: usable[0]?.id ?? "",
  };
}

function Submit(props: { busy: boolean; label: string }) {
  return (
    <button type="submit" disabled={props.busy}>
      {props.label}
    </button>
  );
}

export function LoadBalancerForm(props: { page: Page }) {
  const { page } = props;
  const pools = usePools(page, "load-balancers");
  const f = useCreate(
    { name: "", poolId: "", scope: "regional", region: "", entryProtocol: "http", entryPort: "80", targetProtocol: "http", targetPort: "8080" },
    "loadbalancers",
    (form) => {
      const poolId = form.poolId || pools.first;
      return page.session.client.loadBalancers.create({
        tenantId: page.tenant,
        poolId,
        name: form.name,
        scope: form.scope,
        region: form.scope === "global" ? "" : form.region || pools.regions(poolId)[0],
        targets: { pool: form.scope !== "global" },
        forwarding: [
          { entryProtocol: form.entryProtocol, entryPort: Number(form.entryPort), targetProtocol: form.targetProtocol, targetPort: Number(form.targetPort) },
        ],
        idempotencyKey: idempotencyKey(),
      });
    },
  );
  const protocols: [string, string][] = ["http", "https", "http2", "tcp", "udp"].map((p) => [p, p]);
  const regions = pools.regions(f.form.poolId || pools.first).map((r): [string, string] => [r, r]);
  const rule = (field: string) => `forwarding[0].${field}`;
  return (
    <form onSubmit={f.submit} noValidate>
      {f.text("name", "Name", "1 to 40 characters: lowercase letters, digits and dashes")}
      {f.choice("poolId", "Pool", pools.options)}
      {f.choice("scope", "Scope", [["regional", "regional (over this region's instances)"], ["global", "global (over regional ones)"]])}
      {f.form.scope === "regional" && f.choice("region", "Region", regions)}
      <fieldset>
        <legend>Forwarding rule (targets: every instance of the pool in the region)</legend>
        <div class="row">
          <Field label="Entry protocol" name={rule("entryProtocol")} refusal={f.problem}>
            {(a) => <select {...a} value={f.form.entryProtocol} onChange={(e) => f.setForm({ ...f.form, entryProtocol: e.currentTarget.value })}>{protocols.map(([v]) => <option value={v}>{v}</option>)}</select>}
          </Field>
          <Field label="Entry port" name={rule("entryPort")} refusal={f.problem} hint="1 to 65535">
            {(a) => <input {...a} type="number" value={f.form.entryPort} onInput={(e) => f.setForm({ ...f.form, entryPort: e.currentTarget.value })} />}
          </Field>
          <Field label="Target protocol" name={rule("targetProtocol")} refusal={f.problem}>
            {(a) => <select {...a} value={f.form.targetProtocol} onChange={(e) => f.setForm({ ...f.form, targetProtocol: e.currentTarget.value })}>{protocols.map(([v]) => <option value={v}>{v}</option>)}</select>}
          </Field>
          <Field label="Target port" name={rule("targetPort")} refusal={f.problem} hint="1 to 65535">
            {(a) => <input {...a} type="number" value={f.form.targetPort} onInput={(e) => f.setForm({ ...f.form, targetPort: e.currentTarget.value })} />}
          </Field>
        </div>
      </fieldset>
      <Unplaced refusal={f.problem} placed={["name", "poolId", "scope", "region", ...["entryProtocol", "entryPort", "targetProtocol", "targetPort"].map(rule)]} />
      <Submit busy={f.busy} label="Create load balancer" />
    </form>
  );
}

export function NetworkForm(props: { page: Page }) {
  const { page } = props;
  const pools = usePools(page, "networks");
  const f = useCreate({ name: "", poolId: "", description: "", subnetName: "main", region: "", ipRange: "10.10.0.0/24" }, "networks", (form) => {
    const poolId = form.poolId || pools.first;
    return page.session.client.networks.create({
      tenantId: page.tenant,
      poolId,
      name: form.name,
      description: form.description,
      subnets: [{ name: form.subnetName, region: form.region || pools.regions(poolId)[0], ipRange: form.ipRange }],
      idempotencyKey: idempotencyKey(),
    });
  });
  const regions = pools.regions(f.form.poolId || pools.first).map((r): [string, string] => [r, r]);
  return (
    <form onSubmit={f.submit} noValidate>
      {f.text("name", "Name")}
      {f.choice("poolId", "Pool", pools.options)}
      {f.text("description", "Description")}
      <fieldset>
        <legend>First subnet (a VPC in its region)</legend>
        <Field label="Subnet name" name="subnets[0].name" refusal={f.problem}>
          {(a) => <input {...a} value={f.form.subnetName} onInput={(e) => f.setForm({ ...f.form, subnetName: e.currentTarget.value })} />}
        </Field>
        <Field label="Region" name="subnets[0].region" refusal={f.problem}>
          {(a) => <select {...a} value={f.form.region} onChange={(e) => f.setForm({ ...f.form, region: e.currentTarget.value })}>{regions.map(([v]) => <option value={v}>{v}</option>)}</select>}
        </Field>
        <Field label="IP range" name="subnets[0].ipRange" refusal={f.problem} hint="An IPv4 CIDR">
          {(a) => <input {...a} value={f.form.ipRange} onInput={(e) => f.setForm({ ...f.form, ipRange: e.currentTarget.value })} />}
        </Field>
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
    const poolId = form.poolId || pools.first;
    return page.session.client.instances.create({
      tenantId: page.tenant,
      poolId,
      name: form.name,
      region: form.region || pools.regions(poolId)[0],
      size: form.size,
      image: form.image,
      subnetId: form.subnetId,
      idempotencyKey: idempotencyKey(),
    });
  });
  const regions = pools.regions(f.form.poolId || pools.first).map((r): [string, string] => [r, r]);
  return (
    <form onSubmit={f.submit} noValidate>
      {f.text("name", "Name")}
      {f.choice("poolId", "Pool", pools.options)}
      {f.choice("region", "Region", regions)}
      {f.text("size", "Size", "A size slug: s-1vcpu-1gb")}
      {f.text("image", "Image", "An image slug: ubuntu-24-04-x64")}
      {f.text("subnetId", "Subnet id", "snet_... of one of your networks in the region; empty for none")}
      <Unplaced refusal={f.problem} placed={["name", "poolId", "region", "size", "image", "subnetId"]} />
      <Submit busy={f.busy} label="Create instance" />
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
        poolId: form.poolId || pools.first,
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
        f.text("dnsNames", "DNS names", "Comma-separated: www.example.com, example.com")
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
