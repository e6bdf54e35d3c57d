// What a change would do before it is sent: the kind's plan of the very update or delete the
// page would make. A rolling or replacing update is confirmed in a dialog that shows the plan, a
// delete's confirmation shows its plan, and a refused plan shows its violations without sending
// anything.

import { useEffect, useRef, useState } from "preact/hooks";
import type { Plan } from "../../clients/typescript/src/gen/bettercompute/compute/v1/plans_pb.js";
import type { Refusal } from "./ui.js";

export type { Plan };

/** Whether the plan disturbs running things enough to be confirmed first. */
export function asksConfirmation(plan: Plan): boolean {
  return plan.effect === "rolling" || plan.effect === "replace";
}

/** A refused plan's violations as a form's refusal: each on the field it names. */
export function violations(plan: Plan): Refusal {
  const fields: Record<string, string> = {};
  const whole: string[] = [];
  for (const v of plan.violations) {
    if (v.field) fields[v.field] = fields[v.field] ? `${fields[v.field]}; ${v.description}` : v.description;
    else whole.push(v.description);
  }
  return { fields, message: whole.length ? whole.join("; ") : null };
}

/** A value of a change, as JSON text; none shown as a dash. */
function Value(props: { text: string }) {
  return props.text ? <code>{props.text}</code> : <span>(none)</span>;
}

/** The plan: its effect, the fields with theirs, the provider objects, what users notice. */
export function PlanView(props: { plan: Plan }) {
  const p = props.plan;
  return (
    <div class="plan" data-effect={p.effect}>
      <p class="plan-effect">
        Effect: <strong class={`effect ${p.effect}`}>{p.effect}</strong>
      </p>
      {p.changes.length > 0 && (
        <ul class="plan-changes" aria-label="Changes">
          {p.changes.map((c) => (
            <li data-field={c.field}>
              <code>{c.field}</code>: <Value text={c.from} /> → <Value text={c.to} />{" "}
              <strong class={`effect ${c.effect}`}>{c.effect}</strong>
              {c.detail && <small>{c.detail}</small>}
            </li>
          ))}
        </ul>
      )}
      {p.providerObjects.length > 0 && (
        <>
          <p class="plan-heading">At the provider</p>
          <ul class="plan-objects" aria-label="Provider objects">
            {p.providerObjects.map((o) => (
              <li>
                {o.action} {o.provider} {o.kind} <code>{o.name}</code>
              </li>
            ))}
          </ul>
        </>
      )}
      {p.disruptions.length > 0 && (
        <>
          <p class="plan-heading">What users notice</p>
          <ul class="plan-disruptions" aria-label="Disruptions">
          {p.disruptions.map((d) => (
              <li>{d}</li>
            ))}
          </ul>
        </>
      )}
      {p.quotaEffects.length > 0 && (
        <>
          <p class="plan-heading">Quota and budget</p>
          <ul class="plan-quota" aria-label="Quota effects">
            {p.quotaEffects.map((q) => (
              <li>{q}</li>
            ))}
          </ul>
        </>
      )}
      {p.violations.length > 0 && (
        <ul class="problem" role="alert" aria-label="Violations">
          {p.violations.map((v) => (
            <li>
              {v.field && <code>{v.field}</code>}
              {v.field && ": "}
              {v.description}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** A modal dialog showing a change's plan, to confirm it or keep things as they are. */
function PlanDialog(props: { title: string; plan: Plan; confirm: string; onConfirm: () => void; onCancel: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  return (
    <dialog ref={dialog} class="plan-dialog" aria-labelledby="plan-title" onCancel={props.onCancel}>
      <h2 id="plan-title">{props.title}</h2>
      <PlanView plan={props.plan} />
      <div class="inline">
        <button type="button" class="danger" onClick={props.onConfirm}>
          {props.confirm}
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}

/** A planned change waiting for its confirmation. */
interface Pending {
  title: string;
  plan: Plan;
  send: () => void;
}

/**
 * Sends a change after its plan: `gate(title, plan, send)` asks for the plan; a refused one goes
 * to `onRefused` (and nothing is sent), a rolling or replacing one is confirmed in the returned
 * `dialog` first, any other is sent at once. A failure of the plan call goes to `onError`.
 */
export function usePlanGate(onRefused: (refusal: Refusal) => void, onError: (error: unknown) => void) {
  const [pending, setPending] = useState<Pending | null>(null);
  const gate = (title: string, plan: () => Promise<Plan>, send: () => void) =>
    plan().then((answer) => {
      if (answer.effect === "refused") onRefused(violations(answer));
      else if (asksConfirmation(answer)) setPending({ title, plan: answer, send });
      else send();
    }, onError);
  const dialog = pending && (
    <PlanDialog
      title={pending.title}
      plan={pending.plan}
      confirm="Apply the change"
      onConfirm={() => (setPending(null), pending.send())}
      onCancel={() => setPending(null)}
    />
  );
  return { gate, dialog };
}
