// The signed-in session: the API key (kept in sessionStorage, so it lives as long as the tab),
// the client that calls with it, and who the key is (/console/whoami), from which the console
// decides what to offer: operators pick a tenant, viewers get no create or delete buttons.

import { ApiError, Client } from "../../clients/typescript/src/index.js";

export { ApiError };

const KEY = "bc.apiKey";

/** A role a principal holds at a scope. */
export interface Binding {
  role: string;
  scopeType: string;
  scopeId: string;
}

/** Who the API key is, as /console/whoami says. */
export interface Identity {
  principalId: string;
  /** The principal's name, for people to read. */
  name: string;
  kind: "operator" | "user" | "service-account";
  tenantId: string | null;
  /** The display name of a tenant principal's tenant. */
  tenantName: string | null;
  bindings: Binding[];
}

/** A signed-in session. */
export interface Session {
  client: Client;
  identity: Identity;
}

/** Whether the identity may change things in `tenant`, not only read them. */
export function canWrite(identity: Identity, tenant: string): boolean {
  return identity.bindings.some(
    (b) =>
      b.role === "platform-admin" ||
      ((b.role === "admin" || b.role === "editor") && (b.scopeType !== "tenant" || b.scopeId === tenant)),
  );
}

/** Whether one of the identity's roles in `tenant` (held on the whole tenant) is among `roles`, or it is an operator. */
function holds(identity: Identity, tenant: string, roles: string[]): boolean {
  return identity.bindings.some(
    (b) => b.role === "platform-admin" || (roles.includes(b.role) && b.scopeType === "tenant" && b.scopeId === tenant),
  );
}

/**
 * Whether the identity decides what only a tenant's admins decide in `tenant` (join tokens, bare
 * metal) on a pool: operators on every pool, the tenant's admins on pools on its own accounts.
 */
export function canAdminister(identity: Identity, tenant: string, ownPool: boolean): boolean {
  return holds(identity, tenant, ownPool ? ["admin"] : []);
}

/**
 * Whether the identity reads what is under the whole of `tenant` (its usage, its pools' nodes
 * and substrates): its viewers, editors and admins, and operators; a role on one project of
 * the tenant does not reach the tenant's own rows.
 */
export function canRead(identity: Identity, tenant: string): boolean {
  return holds(identity, tenant, ["viewer", "editor", "admin"]);
}

/** Whether the identity may administer the platform (its catalog, budgets and audit trail). */
export function isPlatformAdmin(identity: Identity): boolean {
  return identity.bindings.some((b) => b.role === "platform-admin");
}

/** Whether the identity is an operator of the platform. */
export function isOperator(identity: Identity): boolean {
  return identity.kind === "operator";
}

/** Asks who `key` is; an ApiError when the server refuses it. */
async function whoami(key: string): Promise<Identity> {
  const response = await fetch("whoami", { headers: { authorization: `Bearer ${key}` } });
  const body = await response.json();
  if (!response.ok) {
    const error = body.error ?? {};
    throw new ApiError(error.code ?? "INTERNAL", error.message ?? response.statusText, error.details ?? {}, 16);
  }
  return body as Identity;
}

/** Signs in with `key`, keeping it for this tab. */
export async function signIn(key: string): Promise<Session> {
  const identity = await whoami(key.trim());
  sessionStorage.setItem(KEY, key.trim());
  return { client: new Client(location.origin, key.trim()), identity };
}

/** The session this tab signed in before a reload, if its key still works. */
export async function resume(): Promise<Session | null> {
  const key = sessionStorage.getItem(KEY);
  if (!key) return null;
  try {
    return await signIn(key);
  } catch {
    sessionStorage.removeItem(KEY);
    return null;
  }
}

/** Forgets the key. */
export function signOut(): void {
  sessionStorage.removeItem(KEY);
}
