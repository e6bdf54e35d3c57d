// The cluster create form, with the fields, defaults and limits of the reference page; a refusal
// shows on the field its `details.fields` path names (`nodePools[1].nodeCount`).

import { useState } from "preact/hooks";
import type { Page } from "../routes.js";
import { Field, NONE, type Refusal, Unplaced, idempotencyKey, refusal, useLoad } from "../ui.js";

/** One node pool row of the form, as typed. */
interface PoolRow {
  name: string;
  machineType: string;
  nodeCount: string;
  min: string;
  max: string;
}

const NEW_POOL: PoolRow = { name: "general", machineType: "e2-standard-4", nodeCount: "2", min: "", max: "" };

/** The request's node pool from a row: autoscaling only when both bounds are given. */
function poolSpec(row: PoolRow) {
  const scales = row.min !== "" && row.max !== "";
  return {
    name: row.name,
    machineType: row.machineType,
    nodeCount: Number(row.nodeCount),
    autoscaling: scales ? { minNodes: Number(row.min), maxNodes: Number(row.max) } : undefined,
  };
}

export function ClusterForm(props: { page: Page }) {
  const { session, tenant } = props.page;
  const pools = useLoad(() => session.client.computePools.list({ tenantId: tenant }), [tenant]);
  const kubernetes = (pools.data?.pools ?? []).filter((p) => p.capabilities.includes("managed-kubernetes"));
  const [form, setForm] = useState({ name: "", poolId: "", location: "", mode: "standard", releaseChannel: "regular", description: "" });
  const [rows, setRows] = useState<PoolRow[]>([{ ...NEW_POOL }]);
  const [problem, setProblem] = useState<Refusal>(NONE);
  const [busy, setBusy] = useState(false);
  const poolId = form.poolId || kubernetes[0]?.id || "";
  const pool = kubernetes.find((p) => p.id === poolId);
  const locations = pool ? [...pool.regions, ...pool.zones] : [];
  const where = form.location || locations[0] || "";
  const set = (key: keyof typeof form) => (e: { currentTarget: { value: string } }) =>
    setForm({ ...form, [key]: e.currentTarget.value });
  const setRow = (i: number, key: keyof PoolRow, value: string) =>
    setRows(rows.map((r, j) => (j === i ? { ...r, [key]: value } : r)));

  const submit = (e: Event) => {
    e.preventDefault();
    setBusy(true);
    session.client.kubernetesClusters
      .create({
        tenantId: tenant,
        poolId,
        name: form.name,
        location: where,
        mode: form.mode,
        releaseChannel: form.releaseChannel,
        description: form.description,
        nodePools: form.mode === "autopilot" ? [] : rows.map(poolSpec),
        idempotencyKey: idempotencyKey(),
      })
      .then(
        (cluster) => (location.hash = `#/clusters/${cluster.id}`),
        (error) => setProblem(refusal(error)),
      )
      .finally(() => setBusy(false));
  };

  const placed = ["name", "poolId", "location", "mode", "releaseChannel", "description"];
  rows.forEach((_, i) => placed.push(...["name", "machineType", "nodeCount", "autoscaling.minNodes", "autoscaling.maxNodes"].map((f) => `nodePools[${i}].${f}`)));
  return (
    <form onSubmit={submit} noValidate>
      <Field label="Name" name="name" refusal={problem} hint="1 to 40 characters: lowercase letters, digits and dashes">
        {(a) => <input {...a} value={form.name} onInput={set("name")} required />}
      </Field>
      <Field label="Pool" name="poolId" refusal={problem}>
        {(a) => (
          <select {...a} value={poolId} onChange={set("poolId")}>
            {kubernetes.map((p) => (
              <option value={p.id}>
                {p.name} ({p.provider})
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Location" name="location" refusal={problem} hint="A region (regional cluster) or a zone (zonal cluster)">
        {(a) => (
          <select {...a} value={where} onChange={set("location")}>
            {locations.map((l) => (
              <option value={l}>{l}</option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Mode" name="mode" refusal={problem}>
        {(a) => (
          <select {...a} value={form.mode} onChange={set("mode")}>
            <option value="standard">standard (node pools below)</option>
            <option value="autopilot">autopilot (the provider runs the nodes)</option>
          </select>
        )}
      </Field>
      <Field label="Release channel" name="releaseChannel" refusal={problem}>
        {(a) => (
          <select {...a} value={form.releaseChannel} onChange={set("releaseChannel")}>
            {["rapid", "regular", "stable", "extended"].map((c) => (
              <option value={c}>{c}</option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Description" name="description" refusal={problem} hint="At most 256 characters">
        {(a) => <input {...a} value={form.description} onInput={set("description")} maxLength={256} />}
      </Field>
      {form.mode === "standard" && (
        <fieldset>
          <legend>Node pools (1 to 10)</legend>
          {rows.map((row, i) => (
            <div class="row">
              <Field label="Pool name" name={`nodePools[${i}].name`} refusal={problem}>
                {(a) => <input {...a} value={row.name} onInput={(e) => setRow(i, "name", e.currentTarget.value)} />}
              </Field>
              <Field label="Machine type" name={`nodePools[${i}].machineType`} refusal={problem}>
                {(a) => <input {...a} value={row.machineType} onInput={(e) => setRow(i, "machineType", e.currentTarget.value)} />}
              </Field>
              <Field label="Nodes per zone" name={`nodePools[${i}].nodeCount`} refusal={problem} hint="0 to 1000">
                {(a) => <input {...a} type="number" value={row.nodeCount} onInput={(e) => setRow(i, "nodeCount", e.currentTarget.value)} />}
              </Field>
              <Field label="Autoscale min" name={`nodePools[${i}].autoscaling.minNodes`} refusal={problem}>
                {(a) => <input {...a} type="number" value={row.min} onInput={(e) => setRow(i, "min", e.currentTarget.value)} />}
              </Field>
              <Field label="Autoscale max" name={`nodePools[${i}].autoscaling.maxNodes`} refusal={problem}>
                {(a) => <input {...a} type="number" value={row.max} onInput={(e) => setRow(i, "max", e.currentTarget.value)} />}
              </Field>
              {rows.length > 1 && (
                <button type="button" onClick={() => setRows(rows.filter((_, j) => j !== i))}>
                  Remove pool {row.name || i + 1}
                </button>
              )}
            </div>
          ))}
          {rows.length < 10 && (
            <button type="button" onClick={() => setRows([...rows, { ...NEW_POOL, name: `pool-${rows.length + 1}` }])}>
              Add a node pool
            </button>
          )}
        </fieldset>
      )}
      <Unplaced refusal={problem} placed={placed} />
      <button type="submit" disabled={busy || !poolId}>
        Create cluster
      </button>
    </form>
  );
}
