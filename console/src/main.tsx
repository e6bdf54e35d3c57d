// The console's shell: sign-in, the caller's identity, the tenant picker for operators, the
// navigation, and the route (the URL's fragment, `#/clusters/kcl_...`) to the page shown.

import { render } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { Watcher } from "./live.js";
import { type Session, canWrite, isOperator, resume, signIn, signOut } from "./session.js";
import { useKnownPools } from "./pools.js";
import { type Page, route, Nav } from "./routes.js";
import { ApiError } from "./session.js";

function SignIn(props: { onSession: (session: Session) => void }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | null>(null);
  const submit = (e: Event) => {
    e.preventDefault();
    signIn(key).then(props.onSession, (failure) => setError(ApiError.from(failure).message));
  };
  return (
    <main class="signin">
      <h1>better-compute</h1>
      <form onSubmit={submit}>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autocomplete="off"
          placeholder="bck_..."
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
          aria-describedby={error ? "api-key-error" : "api-key-hint"}
          aria-invalid={error ? true : undefined}
        />
        <small id="api-key-hint">Kept for this browser tab only. <code>bcctl dev</code> wrote keys to <code>.bc-dev/dev.json</code>.</small>
        {error && (
          <small class="error" id="api-key-error" role="alert">
            {error}
          </small>
        )}
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}

/** A tenant as the picker names it. */
interface TenantChoice {
  id: string;
  name: string;
}

/** The tenant an operator looks at (any tenant), or a tenant principal's own. */
function useTenant(session: Session): [string, (t: string) => void, TenantChoice[]] {
  const { tenantId: own, tenantName } = session.identity;
  const [tenants, setTenants] = useState<TenantChoice[]>(own ? [{ id: own, name: tenantName ?? own }] : []);
  const [tenant, setTenant] = useState(own ?? sessionStorage.getItem("bc.tenant") ?? "");
  useEffect(() => {
    if (!isOperator(session.identity)) return;
    session.client.tenants.list({}).then((list) => {
      const ids = list.tenants.map((t) => t.id);
      setTenants(list.tenants.map((t) => ({ id: t.id, name: t.displayName || t.id })));
      setTenant((current) => (current && ids.includes(current) ? current : (ids[0] ?? "")));
    });
  }, [session]);
  const choose = (t: string) => {
    sessionStorage.setItem("bc.tenant", t);
    setTenant(t);
  };
  return [tenant, choose, tenants];
}

/** How the header names the key's roles: `admin`, `viewer of project prj_...`. */
function roleNames(session: Session): string {
  const roles = session.identity.bindings.map((b) => (b.scopeType === "tenant" || b.scopeType === "platform" ? b.role : `${b.role} of ${b.scopeType} ${b.scopeId}`));
  return [...new Set(roles)].join(", ");
}

function Shell(props: { session: Session; onSignOut: () => void }) {
  const { session } = props;
  const [tenant, setTenant, tenants] = useTenant(session);
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const changed = () => setHash(location.hash);
    addEventListener("hashchange", changed);
    return () => removeEventListener("hashchange", changed);
  }, []);
  const watcher = useMemo(() => (tenant ? new Watcher(session.client, tenant) : null), [session, tenant]);
  useEffect(() => () => watcher?.close(), [watcher]);
  const path = hash.replace(/^#\/?/, "").split("/");
  // Read again on each change of section: pools come and go while the console is open.
  const pools = useKnownPools(session, tenant, path[0]);
  const tenantName = tenants.find((t) => t.id === tenant)?.name ?? tenant;
  const page: Page = { session, tenant, tenantName, watcher, writable: canWrite(session.identity, tenant), path, pools };
  const who = session.identity;
  const roles = roleNames(session);
  return (
    <>
      <header>
        <a class="brand" href="#/clusters">
          better-compute
        </a>
        <div class="who" aria-label="Signed in as">
          <span title={who.principalId}>{who.name || who.principalId}</span>
          <span class="muted">
            {who.kind === "operator" ? "operator" : who.kind}
            {who.tenantId ? ` of ${who.tenantName ?? who.tenantId}` : ""} · {roles || "no role"}
          </span>
        </div>
        {isOperator(who) ? (
          <label class="tenant">
            Tenant{" "}
            <select value={tenant} onChange={(e) => setTenant(e.currentTarget.value)}>
              {tenants.map((t) => (
                <option value={t.id}>{t.name === t.id ? t.id : `${t.name} (${t.id})`}</option>
              ))}
            </select>
          </label>
        ) : (
          <span class="tenant">Tenant {tenantName}</span>
        )}
        <button type="button" onClick={props.onSignOut}>
          Sign out
        </button>
      </header>
      <div class="layout">
        <Nav page={page} current={path[0] || "clusters"} />
        <main>{tenant ? route(page) : <p>No tenant to show.</p>}</main>
      </div>
    </>
  );
}

function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  useEffect(() => {
    resume().then(setSession);
  }, []);
  if (session === undefined) return <p class="loading">Loading…</p>;
  if (session === null) return <SignIn onSession={setSession} />;
  return (
    <Shell
      session={session}
      onSignOut={() => {
        signOut();
        setSession(null);
      }}
    />
  );
}

render(<App />, document.getElementById("app")!);
