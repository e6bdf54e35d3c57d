// The pieces every page is made of: loading a call's answer, tables, states, times, form fields
// that show the API's refusal on the field it names, and a delete that asks once more.

import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import { type Plan, PlanView } from "./plan.js";
import { ApiError } from "./session.js";

/** A protobuf timestamp as the generated messages carry it. */
export interface Timestamp {
  seconds: bigint;
  nanos: number;
}

/** What an input of a [`Field`] carries: its id, name and how it is described. */
export interface InputAttributes {
  id: string;
  name: string;
  "aria-invalid"?: boolean;
  "aria-describedby"?: string;
}

/** A call's answer as a page shows it, and a way to make the call again. */
export interface Loaded<T> {
  data: T | null;
  error: ApiError | null;
  reload: () => void;
}

/** Makes `call` when `deps` change and whenever `reload` is called; keeps the last answer while reloading. */
export function useLoad<T>(call: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let current = true;
    call().then(
      (answer) => current && (setData(answer), setError(null)),
      (failure) => current && setError(ApiError.from(failure)),
    );
    return () => {
      current = false;
    };
  }, [...deps, tick]);
  return { data, error, reload: useCallback(() => setTick((t) => t + 1), []) };
}

/** A column of a table. */
export interface Column<T> {
  header: string;
  cell: (row: T) => ComponentChildren;
}

/** A table of `rows`, or a line saying there are none. */
export function Table<T>(props: { label: string; columns: Column<T>[]; rows: T[]; empty?: string }) {
  if (props.rows.length === 0) return <p class="empty">{props.empty ?? "None yet."}</p>;
  return (
    <table aria-label={props.label}>
      <thead>
        <tr>
          {props.columns.map((c) => (
            <th scope="col">{c.header}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) => (
          <tr>
            {props.columns.map((c) => (
              <td>{c.cell(row)}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A resource's state, coloured by what it means. */
export function State(props: { state: string; message?: string }) {
  const tone = ["ready", "active", "manageable", "deployed"].includes(props.state)
    ? "good"
    : props.state === "error" || props.state.endsWith("Failed")
      ? "bad"
      : ["deleted", "revoked", "retired"].includes(props.state)
        ? "gone"
        : "busy";
  return (
    <span class={`state ${tone}`} title={props.message || undefined} data-state={props.state}>
      {props.state}
    </span>
  );
}

/** A timestamp as a Date. */
export function toDate(time: Timestamp | undefined): Date | null {
  return time ? new Date(Number(time.seconds) * 1000 + Math.floor(time.nanos / 1e6)) : null;
}

/** How long ago or how far ahead `date` is: `5m`, `in 1h`. */
export function relative(date: Date): string {
  const seconds = Math.round((date.getTime() - Date.now()) / 1000);
  const abs = Math.abs(seconds);
  const span =
    abs < 60 ? `${abs}s` : abs < 3600 ? `${Math.floor(abs / 60)}m` : abs < 86400 ? `${Math.floor(abs / 3600)}h` : `${Math.floor(abs / 86400)}d`;
  return seconds > 0 ? `in ${span}` : `${span} ago`;
}

/** A time: its distance from now, the exact time on hover. */
export function When(props: { time: Timestamp | undefined }) {
  const date = toDate(props.time);
  if (!date) return <span>—</span>;
  return <time dateTime={date.toISOString()} title={date.toISOString()}>{relative(date)}</time>;
}

/** The refusal of a form's call: each field's description by path, and what no field explains. */
export interface Refusal {
  fields: Record<string, string>;
  message: string | null;
}

/** A form's refusal from the error its call threw: `details.fields` names the fields. */
export function refusal(error: unknown): Refusal {
  const api = ApiError.from(error);
  const fields: Record<string, string> = {};
  const listed = (api.details as { fields?: { field: string; description: string }[] }).fields ?? [];
  for (const f of listed) fields[f.field] = fields[f.field] ? `${fields[f.field]}; ${f.description}` : f.description;
  return { fields, message: listed.length === 0 || Object.keys(fields).length === 0 ? api.message : null };
}

/** No refusal. */
export const NONE: Refusal = { fields: {}, message: null };

/** A labelled input whose refusal (by the path `name`) shows under it. */
export function Field(props: {
  label: string;
  name: string;
  refusal: Refusal;
  hint?: string;
  children: (attributes: InputAttributes) => ComponentChildren;
}) {
  const id = `f-${props.name.replace(/[^A-Za-z0-9]/g, "-")}`;
  const problem = props.refusal.fields[props.name];
  const described = [props.hint && `${id}-hint`, problem && `${id}-error`].filter(Boolean).join(" ") || undefined;
  return (
    <div class={problem ? "field invalid" : "field"}>
      <label for={id}>{props.label}</label>
      {props.children({ id, name: props.name, "aria-invalid": problem ? true : undefined, "aria-describedby": described })}
      {props.hint && <small id={`${id}-hint`}>{props.hint}</small>}
      {problem && (
        <small class="error" id={`${id}-error`} role="alert" data-field={props.name}>
          {problem}
        </small>
      )}
    </div>
  );
}

/** Refusals of fields the form has no input for, and the message no field explains. */
export function Unplaced(props: { refusal: Refusal; placed: string[] }) {
  const rest = Object.entries(props.refusal.fields).filter(([f]) => !props.placed.includes(f));
  if (!props.refusal.message && rest.length === 0) return null;
  return (
    <div class="problem" role="alert">
      {props.refusal.message && <p>{props.refusal.message}</p>}
      {rest.map(([field, text]) => (
        <p>
          <code>{field}</code>: {text}
        </p>
      ))}
    </div>
  );
}

/** A failed load. */
export function Failure(props: { error: ApiError | null }) {
  if (!props.error) return null;
  return (
    <p class="problem" role="alert">
      {props.error.message}
    </p>
  );
}

/**
 * A delete (or `verb`: revoke) button that asks once more before calling `onDelete`; with `plan`,
 * the question shows what the delete would do, and a refused plan's violations instead of a yes.
 */
export function DeleteButton(props: { what: string; verb?: string; onDelete: () => Promise<unknown>; plan?: () => Promise<Plan> }) {
  const verb = props.verb ?? "Delete";
  const [asking, setAsking] = useState(false);
  const [plan, setPlan] = useState<Plan | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const ask = () => {
    setAsking(true);
    setPlan(null);
    setError(null);
    props.plan?.().then(setPlan, (e) => setError(ApiError.from(e)));
  };
  if (!asking) {
    return (
      <button class="danger" type="button" onClick={ask}>
        {verb} {props.what}
      </button>
    );
  }
  const refused = plan?.effect === "refused";
  const waiting = props.plan !== undefined && plan === null && error === null;
  return (
    <span class="confirm">
      {plan && <PlanView plan={plan} />}
      {!refused && (
        <button
          class="danger"
          type="button"
          disabled={waiting}
          onClick={() =>
            props.onDelete().then(
              () => setAsking(false),
              (e) => setError(ApiError.from(e)),
            )
          }
        >
          Yes, {verb.toLowerCase()} {props.what}
        </button>
      )}
      <button type="button" onClick={() => setAsking(false)}>
        Keep it
      </button>
      <Failure error={error} />
    </span>
  );
}

/** Terms and their descriptions: a resource's fields on its detail page. */
export function Facts(props: { items: [string, ComponentChildren][] }) {
  return (
    <dl class="facts">
      {props.items.map(([term, value]) => (
        <>
          <dt>{term}</dt>
          <dd>{value === "" || value === undefined || value === null ? "—" : value}</dd>
        </>
      ))}
    </dl>
  );
}

/** A random idempotency key for one submission of a create form. */
export function idempotencyKey(): string {
  // getRandomValues, unlike randomUUID, works on a plain-http origin other than localhost too.
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}
