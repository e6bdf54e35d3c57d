// Bare metal, per pool: the machines enrolled by their BMCs with their provision and power state
// (live on the pool's `metal.machine.*` events), the enrolment form, and a machine's metal view
// with why it is stuck, a button for each verb its state allows (`allowedVerbs`, the server's
// table: the console repeats none of it) and its BMC calls. Only the tenant's admins and operators decide bare metal, so every other
// key is offered no enrolment and no verb.

import { useState } from "preact/hooks";
import type { Client } from "../../../clients/typescript/src/index.js";
import type { MetalInventory, MetalMachine } from "../../../clients/typescript/src/gen/bettercompute/compute/v1/metal_pb.js";
import { type Watcher, useLive } from "../live.js";
import { type ChosenPool, type PoolChoice, PoolName, eventTenant, usePool, usePoolWatcher } from "../pools.js";
import { Operations, ProblemPanel } from "../problem.js";
import type { Page } from "../routes.js";
import { ApiError, canAdminister } from "../session.js";
import { DeleteButton, Facts, Failure, Field, NONE, type Refusal, State, Table, Unplaced, When, idempotencyKey, refusal, useLoad } from "../ui.js";

/** The prefix of every change of a machine. */
const EVENTS = "metal.machine.";

/** Whether the key may enrol and move machines of `pool`: operators, and the admins of the tenant whose account it is on. */
function mayDecide(page: Page, pool: PoolChoice | null): boolean {
  return !!pool && canAdminister(page.session.identity, pool.owner || page.tenant, !!pool.owner);
}

/** A refusal of the read itself, said as what it means here. */
function Refused(props: { error: ApiError | null }) {
  if (props.error?.code === "ACCESS_DENIED") {
    return <p class="empty">Bare metal is for the admins of the tenant whose account the pool is on, and for operators: this key may not see its machines.</p>;
  }
  return <Failure error={props.error} />;
}

export function Metal(props: { page: Page }) {
  const { page } = props;
  const chosen = usePool(page);
  const node = page.path[2];
  const watcher = usePoolWatcher(page, chosen.pool);
  if (node && chosen.pool) return <MachineDetail page={page} pool={chosen.pool} node={node} watcher={watcher} />;
  return <MachineList page={page} chosen={chosen} watcher={watcher} />;
}

function MachineList(props: { page: Page; chosen: ChosenPool; watcher: Watcher | null }) {
  const { page, chosen } = props;
  const pool = chosen.id;
  const machines = useLoad(() => (pool ? page.session.client.metal.list({ poolId: pool }) : Promise.resolve(null)), [pool]);
  useLive(props.watcher, [EVENTS], machines.reload);
  const decide = mayDecide(page, chosen.pool);
  return (
    <section>
      <h1>Bare metal</h1>
      {chosen.picker}
      <Refused error={machines.error} />
      {machines.data && (
        <Table
          label="Machines"
          rows={machines.data.machines}
          empty="No machine is enrolled in this pool yet."
          columns={[
            { header: "Name", cell: (m) => <a href={`#/metal/${pool}/${m.id}`}>{m.name}</a> },
            { header: "Node", cell: (m) => <code>{m.id}</code> },
            { header: "Driver", cell: (m) => m.driver },
            { header: "Provision state", cell: (m) => <State state={m.provisionState} message={m.lastError} /> },
            { header: "Power", cell: (m) => m.powerState },
            { header: "Age", cell: (m) => <When time={m.createdAt} /> },
          ]}
        />
      )}
      {decide && chosen.pool && <EnrollForm page={page} pool={pool} onEnrolled={machines.reload} />}
    </section>
  );
}

/** The form's values; the password lives here only until the form is sent. */
interface Enrolment {
  name: string;
  driver: string;
  address: string;
  username: string;
  password: string;
  insecure: boolean;
  caCertificate: string;
}

const BLANK: Enrolment = { name: "", driver: "redfish", address: "", username: "", password: "", insecure: false, caCertificate: "" };

/** The fields the form has an input for, as `details.fields` names them. */
const PLACED = ["name", "bmc.driver", "bmc.address", "bmc.username", "bmc.password", "bmc.insecure", "bmc.caCertificate"];

function EnrollForm(props: { page: Page; pool: string; onEnrolled: () => void }) {
  const { page, pool } = props;
  const [form, setForm] = useState<Enrolment>(BLANK);
  const [problem, setProblem] = useState<Refusal>(NONE);
  const [busy, setBusy] = useState(false);
  const [enrolled, setEnrolled] = useState<MetalMachine | null>(null);
  const set = (change: Partial<Enrolment>) => setForm({ ...form, ...change });
  const submit = (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const { name, driver, address, username, password, insecure, caCertificate } = form;
    // The password is sent once and not kept: the form forgets it whatever the answer.
    setForm({ ...form, password: "" });
    page.session.client.metal
      .enroll({ poolId: pool, name, idempotencyKey: idempotencyKey(), bmc: { driver, address, username, password, insecure, caCertificate } })
      .then(
        (machine) => (setEnrolled(machine), setProblem(NONE), setForm(BLANK), props.onEnrolled()),
        (error) => (setEnrolled(null), setProblem(refusal(error))),
      )
      .finally(() => setBusy(false));
  };
  const text = (key: "name" | "address" | "username" | "password", label: string, path: string, more: { type?: string; hint?: string } = {}) => (
    <Field label={label} name={path} refusal={problem} hint={more.hint}>
      {(a) => (
        <input
          {...a}
          type={more.type ?? "text"}
          autocomplete={more.type === "password" ? "new-password" : "off"}
          value={form[key]}
          onInput={(e) => set({ [key]: e.currentTarget.value })}
        />
      )}
    </Field>
  );
  return (
    <>
      <h2>Enroll a machine</h2>
      {enrolled && (
        <p role="status">
          Enrolled {enrolled.name} (<code>{enrolled.id}</code>): the list above follows it from <code>enrolling</code> until its BMC is reached.
        </p>
      )}
      <form onSubmit={submit} noValidate aria-label="Enroll a machine">
        {text("name", "Name", "name", { hint: "A DNS label, unique among the pool's machines." })}
        <fieldset>
          <legend>BMC</legend>
          <Field label="Driver" name="bmc.driver" refusal={problem}>
            {(a) => (
              <select {...a} value={form.driver} onChange={(e) => set({ driver: e.currentTarget.value })}>
                <option value="redfish">Redfish</option>
                <option value="ipmi">IPMI</option>
              </select>
            )}
          </Field>
          {text("address", "Address", "bmc.address", { hint: "Redfish: the service root's https:// URL (with the system's path when there are several). IPMI: host or host:port." })}
          {text("username", "Username", "bmc.username")}
          {text("password", "Password", "bmc.password", { type: "password", hint: "Sealed at rest and never shown again." })}
          <Field label="CA certificate" name="bmc.caCertificate" refusal={problem} hint="PEM, when the BMC's certificate is not from a public CA.">
            {(a) => <textarea {...a} rows={4} value={form.caCertificate} onInput={(e) => set({ caCertificate: e.currentTarget.value })} />}
          </Field>
          <Field label="Accept any certificate (insecure)" name="bmc.insecure" refusal={problem}>
            {(a) => <input {...a} type="checkbox" checked={form.insecure} onChange={(e) => set({ insecure: e.currentTarget.checked })} />}
          </Field>
        </fieldset>
        <Unplaced refusal={problem} placed={PLACED} />
        <button type="submit" disabled={busy}>
          Enroll machine
        </button>
      </form>
    </>
  );
}

/** The machine a verb is called on. */
type Target = { poolId: string; nodeId: string };

/**
 * A verb's button, by the name `allowedVerbs` gives it, and its call; `deploy` asks for its image
 * first, and `update` is no button.
 */
const VERBS: Record<string, { label: string; confirm?: boolean; call?: (metal: Client["metal"], target: Target) => Promise<unknown> }> = {
  inspect: { label: "Inspect", call: (metal, t) => metal.inspect(t) },
  commission: { label: "Commission", call: (metal, t) => metal.commission(t) },
  deploy: { label: "Deploy" },
  rescue: { label: "Rescue", call: (metal, t) => metal.rescue(t) },
  exitRescue: { label: "Exit rescue", call: (metal, t) => metal.rescue({ ...t, exit: true }) },
  release: { label: "Release", confirm: true, call: (metal, t) => metal.release(t) },
  retire: { label: "Retire", confirm: true, call: (metal, t) => metal.retire(t) },
  delete: { label: "Delete", confirm: true, call: (metal, t) => metal.delete(t) },
};

function MachineDetail(props: { page: Page; pool: PoolChoice; node: string; watcher: Watcher | null }) {
  const { page, pool, node } = props;
  const one = useLoad(() => page.session.client.metal.get({ poolId: pool.id, nodeId: node }), [pool.id, node]);
  useLive(props.watcher, [EVENTS], one.reload);
  const m = one.data;
  return (
    <section>
      <p>
        <a href={`#/metal/${pool.id}`}>← Bare metal</a>
      </p>
      <Refused error={one.error} />
      {m && (
        <>
          <h1>
            Machine {m.name} <State state={m.provisionState} message={m.lastError} />
          </h1>
          <ProblemPanel problem={m.problem} />
          {mayDecide(page, pool) && <Verbs page={page} machine={m} onDone={one.reload} />}
          {m.lastError && <p class="problem">{m.lastError}</p>}
          <Facts
            items={[
              ["Node", <code>{m.id}</code>],
              ["Pool", <PoolName page={page} id={m.poolId} />],
              ["Provision state", m.provisionState],
              ["Previous state", m.previousState],
              ["Deadline", m.deadline ? <When time={m.deadline} /> : ""],
              ["Power", m.powerState],
              ["Last error", m.lastError],
              ["Image", m.image],
              ["Driver", m.driver],
              ["BMC address", <code>{m.address}</code>],
              ["BMC user", m.username],
              ["Credentials set", m.credentialsSet ? "yes" : "no"],
              ["CA certificate", m.caCertificate ? "given" : ""],
              ["Insecure", m.insecure ? "yes: any certificate is accepted" : "no"],
              ["Labels", Object.entries(m.labels).map(([k, v]) => `${k}=${v}`).join(", ")],
              ["Enrolled by", m.createdBy === page.session.identity.principalId ? `${page.session.identity.name} (you)` : <code>{m.createdBy}</code>],
              ["Enrolled", <When time={m.createdAt} />],
              ["Changed", <When time={m.updatedAt} />],
              ...(m.deletedAt ? [["Deleted", <When time={m.deletedAt} />] as [string, preact.ComponentChildren]] : []),
            ]}
          />
          <Inventory inventory={m.inventory} />
          <Operations page={page} tenant={eventTenant(pool)} id={m.id} watcher={props.watcher} />
        </>
      )}
    </section>
  );
}

/** A button for each verb the machine's state allows, and no other. */
function Verbs(props: { page: Page; machine: MetalMachine; onDone: () => void }) {
  const { page, machine: m } = props;
  const metal = page.session.client.metal;
  const [error, setError] = useState<ApiError | null>(null);
  const [deploying, setDeploying] = useState(false);
  const [image, setImage] = useState("");
  const [problem, setProblem] = useState<Refusal>(NONE);
  const target = { poolId: m.poolId, nodeId: m.id };
  // A deleted machine is left out of the pool's list: its page goes back there.
  const act = (verb: string) =>
    VERBS[verb].call!(metal, target).then(() => (verb === "delete" ? (location.hash = `#/metal/${m.poolId}`) : (setError(null), props.onDone())));
  const deploy = (e: Event) => {
    e.preventDefault();
    metal.deploy({ ...target, image }).then(
      () => (setDeploying(false), setProblem(NONE), setImage(""), props.onDone()),
      (failure) => setProblem(refusal(failure)),
    );
  };
  const verbs = m.allowedVerbs.filter((v) => v in VERBS);
  if (verbs.length === 0) {
    return <p class="note">{m.deletedAt ? "The machine is deleted." : `No verb is allowed while the machine is ${m.provisionState}.`}</p>;
  }
  return (
    <div class="inline verbs" role="group" aria-label="Verbs">
      {verbs.map((verb) => {
        const { label, confirm } = VERBS[verb];
        if (verb === "deploy") {
          return (
            <span data-verb={verb}>
              <button type="button" onClick={() => setDeploying(!deploying)} aria-expanded={deploying}>
                {label}
              </button>
            </span>
          );
        }
        if (confirm) {
          return (
            <span data-verb={verb}>
              <DeleteButton
                verb={label}
                what="machine"
                plan={verb === "delete" ? () => metal.plan({ change: { case: "delete", value: target } }) : undefined}
                onDelete={() => act(verb)}
              />
            </span>
          );
        }
        return (
          <span data-verb={verb}>
            <button type="button" onClick={() => act(verb).catch((failure) => setError(ApiError.from(failure)))}>
              {label}
            </button>
          </span>
        );
      })}
      {deploying && (
        <form class="inline" onSubmit={deploy} noValidate aria-label="Deploy">
          <Field label="Image" name="image" refusal={problem} hint="An https:// URL of a bootable ISO; empty for the pool's default.">
            {(a) => <input {...a} value={image} onInput={(e) => setImage(e.currentTarget.value)} />}
          </Field>
          <button type="submit">Deploy the image</button>
          <Unplaced refusal={problem} placed={["image"]} />
        </form>
      )}
      <Failure error={error} />
    </div>
  );
}

/** What inspection read from the BMC, once it ran. */
function Inventory(props: { inventory: MetalInventory | undefined }) {
  const i = props.inventory;
  if (!i) return <p class="empty">No inventory yet: inspection reads it from the BMC.</p>;
  const gib = (bytes: bigint) => `${(Number(bytes) / 2 ** 30).toFixed(0)} GiB`;
  return (
    <>
      <h2>Inventory</h2>
      <Facts
        items={[
          ["CPUs", `${i.cpus}${i.cpuModel ? ` (${i.cpuModel})` : ""}`],
          ["Memory", `${(Number(i.memoryMib) / 1024).toFixed(0)} GiB`],
          ["Vendor", i.vendor],
          ["Model", i.model],
          ["Serial", i.serial],
        ]}
      />
      <Table
        label="NICs"
        rows={i.nics}
        empty="No NIC found."
        columns={[
          { header: "NIC", cell: (n) => n.name },
          { header: "MAC", cell: (n) => <code>{n.mac}</code> },
        ]}
      />
      <Table
        label="Disks"
        rows={i.disks}
        empty="No disk found."
        columns={[
          { header: "Disk", cell: (d) => d.name },
          { header: "Size", cell: (d) => gib(d.sizeBytes) },
        ]}
      />
    </>
  );
}
