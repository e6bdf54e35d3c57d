// The pools a signed-in key knows of, by name, and the pool the machine pages (join tokens,
// nodes, substrates, bare metal) are about: a picker whose choice lives in the URL
// (`#/nodes/pool_...`), so that one page links to another's view of the same pool, and the event
// stream that carries the pool's changes.
//
// An operator's machine pages are about every pool of the platform (its own pools and those on
// tenants' accounts, offered to anyone or to no one), whichever tenant the header shows; a
// tenant's are about the pools on its own accounts, the only ones that take its machines and
// whose machines are its to read. A pool the URL names that is not among them is said to be so,
// never swapped for another.

import { useEffect, useMemo, useRef } from "preact/hooks";
import { Watcher } from "./live.js";
import type { Page } from "./routes.js";
import { type Session, isOperator } from "./session.js";
import { type Loaded, useLoad } from "./ui.js";

/** A pool as the console names and groups it. */
export interface PoolChoice {
  id: string;
  name: string;
  provider: string;
  /** The tenant whose account the pool is on; "" for the platform's own. */
  owner: string;
  /** `active`, `archived`. */
  state: string;
}

/**
 * The pools the key knows of: every pool of the platform for an operator, the pools visible to
 * the tenant (its own and those offered to it) otherwise. Read again when `when` changes.
 */
export function useKnownPools(session: Session, tenant: string, when: unknown): Loaded<PoolChoice[]> {
  const client = session.client;
  return useLoad(async () => {
    if (isOperator(session.identity)) {
      const list = await client.platformPools.list({});
      return list.pools.map((p) => ({ id: p.id, name: p.name, provider: p.provider, owner: p.tenantId, state: p.state }));
    }
    if (!tenant) return [];
    const list = await client.computePools.list({ tenantId: tenant });
    return list.pools.map((p) => ({ id: p.id, name: p.name, provider: p.provider, owner: p.own ? tenant : "", state: p.state }));
  }, [session, tenant, when]);
}

/** The pools whose machines the key's machine pages show. */
export function machinePools(page: Page): PoolChoice[] {
  const all = page.pools.data ?? [];
  return isOperator(page.session.identity) ? all : all.filter((p) => p.owner === page.tenant);
}

/** A pool's name, by its id; the id while it is not known. */
export function poolName(page: Page, id: string): string {
  return page.pools.data?.find((p) => p.id === id)?.name ?? id;
}

/** A pool by name, with its id for whoever needs it. */
export function PoolName(props: { page: Page; id: string }) {
  const name = poolName(props.page, props.id);
  if (!props.id) return <span>—</span>;
  return name === props.id ? <code>{props.id}</code> : <span title={props.id}>{name}</span>;
}

/** Who a pool belongs to, as its picker says it. */
function whose(page: Page, pool: PoolChoice): string {
  if (!pool.owner) return "the platform's";
  return pool.owner === page.session.identity.tenantId ? "your account" : `${pool.owner}'s account`;
}

/** The chosen pool, its id ("" while there is none) and the picker that changes it. */
export interface ChosenPool {
  pool: PoolChoice | null;
  id: string;
  picker: preact.JSX.Element;
}

/**
 * The pool picker the machine pages start with: the pool the URL names, else the first. A pool
 * named by the URL and not known is read again once (it may be new), then said to be unknown.
 */
export function usePool(page: Page): ChosenPool {
  const list = machinePools(page);
  const section = page.path[0];
  const wanted = page.path[1];
  const pool = wanted ? (list.find((p) => p.id === wanted) ?? null) : (list[0] ?? null);
  const missing = !!wanted && !!page.pools.data && !pool;
  const asked = useRef(new Set<string>());
  useEffect(() => {
    if (missing && !asked.current.has(wanted)) {
      asked.current.add(wanted);
      page.pools.reload();
    }
  }, [missing, wanted]);
  const tenantName = page.tenantName;
  let picker: preact.JSX.Element;
  if (page.pools.data && list.length === 0) {
    const used = (page.pools.data ?? []).filter((p) => !p.owner).map((p) => p.name);
    picker = (
      <p class="empty">
        Machines join pools on {tenantName}'s own provider accounts, and it has none.
        {used.length > 0 && ` The pools it uses (${used.join(", ")}) are the platform's: their machines are the platform operators' to run.`}
      </p>
    );
  } else {
    picker = (
      <>
        <label class="picker">
          Pool{" "}
          <select value={pool?.id ?? ""} onChange={(e) => (location.hash = `#/${section}/${e.currentTarget.value}`)}>
            {!pool && <option value="">choose a pool</option>}
            {list.map((p) => (
              <option value={p.id}>
                {p.name} ({p.provider}, {whose(page, p)}){p.state === "archived" ? ", archived" : ""}
              </option>
            ))}
          </select>
        </label>
        {missing && asked.current.has(wanted) && (
          <p class="problem" role="alert">
            No pool <code>{wanted}</code> is among {isOperator(page.session.identity) ? "the platform's pools" : `the pools on ${tenantName}'s own accounts`}: choose one above.
          </p>
        )}
      </>
    );
  }
  return { pool, id: pool?.id ?? "", picker };
}

/** The tenant whose events tell of the pool's changes: its owner, or `platform` for the platform's own. */
export function eventTenant(pool: PoolChoice): string {
  return pool.owner || "platform";
}

/**
 * The event stream that carries the pool's changes: the page's own stream when the pool records
 * them under the tenant shown, else a stream of its own while the page is open.
 */
export function usePoolWatcher(page: Page, pool: PoolChoice | null): Watcher | null {
  const tenant = pool ? eventTenant(pool) : page.tenant;
  const own = tenant === page.tenant;
  const watcher = useMemo(() => (own ? null : new Watcher(page.session.client, tenant)), [page.session, tenant, own]);
  useEffect(() => () => watcher?.close(), [watcher]);
  return own ? page.watcher : watcher;
}
