// The pool the machine pages (join tokens, nodes, substrates, bare metal) are about: a picker whose choice
// lives in the URL (`#/nodes/pool_...`), so that one page links to another's view of the same
// pool, and the event stream that carries the pool's changes.

import { useEffect, useMemo } from "preact/hooks";
import type { Pool } from "../../clients/typescript/src/gen/bettercompute/compute/v1/pools_pb.js";
import { Watcher } from "./live.js";
import type { Page } from "./routes.js";
import { isOperator } from "./session.js";
import { useLoad } from "./ui.js";

/** The chosen pool, its id ("" while there is none) and the picker that changes it. */
export interface ChosenPool {
  pool: Pool | null;
  id: string;
  picker: preact.JSX.Element;
}

/**
 * The pool picker the machine pages start with (the pool in the URL, else the first): every pool
 * of the tenant for an operator, a tenant's pools on its own accounts otherwise, as only those
 * take its machines and only those are its to read.
 */
export function usePool(page: Page): ChosenPool {
  const pools = useLoad(() => page.session.client.computePools.list({ tenantId: page.tenant }), [page.tenant]);
  const list = (pools.data?.pools ?? []).filter((p) => p.own || isOperator(page.session.identity));
  const section = page.path[0];
  const pool = list.find((p) => p.id === page.path[1]) ?? list[0] ?? null;
  const picker =
    pools.data && list.length === 0 ? (
      <p class="empty">Machines join pools on your own provider accounts, and {page.tenant} has none.</p>
    ) : (
      <label class="picker">
        Pool{" "}
        <select value={pool?.id ?? ""} onChange={(e) => (location.hash = `#/${section}/${e.currentTarget.value}`)}>
          {list.map((p) => (
            <option value={p.id}>
              {p.name} ({p.provider}){p.own ? ", your account" : ""}
            </option>
          ))}
        </select>
      </label>
    );
  return { pool, id: pool?.id ?? "", picker };
}

/**
 * The event stream that carries the pool's changes: a pool on the tenant's own account records
 * them under the tenant (the page's own stream), a platform pool under `platform`, which only an
 * operator reads, on a stream of its own while the page is open.
 */
export function usePoolWatcher(page: Page, pool: Pool | null): Watcher | null {
  const tenant = pool ? eventTenant(page, pool) : page.tenant;
  const own = tenant === page.tenant;
  const watcher = useMemo(() => (own ? null : new Watcher(page.session.client, tenant)), [page.session, tenant, own]);
  useEffect(() => () => watcher?.close(), [watcher]);
  return own ? page.watcher : watcher;
}

/** The tenant whose events tell of the pool's changes. */
export function eventTenant(page: Page, pool: Pool): string {
  return pool.own ? page.tenant : "platform";
}
