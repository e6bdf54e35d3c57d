// Which page a fragment shows (`#/clusters`, `#/clusters/new`, `#/clusters/kcl_...`,
// `#/substrates/pool_...`, `#/metal/pool_.../node_...`), who each section is for, and the
// navigation between them. A section the key's role cannot use is left out of the navigation,
// and its URL shows who it is for instead of a refusal.

import type { ComponentChildren } from "preact";
import type { Watcher } from "./live.js";
import { type PoolChoice, machinePools } from "./pools.js";
import { type Session, canAdminister, canRead, isOperator, isPlatformAdmin } from "./session.js";
import type { Loaded } from "./ui.js";
import { ClusterCreate, ClusterDetail, ClusterList } from "./pages/clusters.js";
import { KINDS, ResourceCreate, ResourceDetail, ResourceList } from "./pages/resources.js";
import { JoinTokens, Nodes } from "./pages/machines.js";
import { Substrates } from "./pages/substrates.js";
import { Metal } from "./pages/metal.js";
import { Audit } from "./pages/operator.js";
import { Usage } from "./pages/usage.js";

/** What every page is given. */
export interface Page {
  session: Session;
  /** The tenant shown. */
  tenant: string;
  /** Its display name. */
  tenantName: string;
  /** Its event stream. */
  watcher: Watcher | null;
  /** Whether the key may create and delete in the tenant. */
  writable: boolean;
  /** The fragment's segments: `["clusters", "kcl_..."]`. */
  path: string[];
  /** The pools the key knows of (see `useKnownPools`). */
  pools: Loaded<PoolChoice[]>;
}

/** A section of the console: its page, and whether the key's role may use it (else who may). */
interface Section {
  path: string;
  title: string;
  page: (page: Page) => ComponentChildren;
  /** `null` when the key may use the section; otherwise who the section is for. */
  refusal: (page: Page) => string | null;
}

/** A section for the tenant's readers: its viewers, editors and admins, and operators. */
const readers = (page: Page) => (canRead(page.session.identity, page.tenant) ? null : "the tenant's viewers, editors and admins, and operators");

/** A section for the admins of the tenant whose account a pool is on, and operators; `more` says what else it means. */
const poolAdmins =
  (more = "") =>
  (page: Page) =>
    canAdminister(page.session.identity, page.tenant, true) ? null : `the admins of the tenant whose account a pool is on, and operators${more}`;

/** Whether the tenant's own pools decide the section: none yet, and there is nothing to show. */
const ownPools = (page: Page) => isOperator(page.session.identity) || machinePools(page).length > 0;

const SECTIONS: Section[] = [
  { path: "clusters", title: "Clusters", page: clusters, refusal: () => null },
  ...KINDS.map(
    (kind): Section => ({
      path: kind.path,
      title: kind.title,
      page: (page) => {
        const id = page.path[1];
        if (id === "new") return <ResourceCreate page={page} kind={kind} />;
        return id ? <ResourceDetail page={page} kind={kind} id={id} /> : <ResourceList page={page} kind={kind} />;
      },
      refusal: () => null,
    }),
  ),
  {
    path: "jointokens",
    title: "Join tokens",
    page: (page) => <JoinTokens page={page} />,
    refusal: poolAdmins(),
  },
  {
    path: "nodes",
    title: "Nodes",
    page: (page) => <Nodes page={page} />,
    refusal: readers,
  },
  {
    path: "substrates",
    title: "Substrates",
    page: (page) => <Substrates page={page} />,
    refusal: readers,
  },
  {
    path: "metal",
    title: "Bare metal",
    page: (page) => <Metal page={page} />,
    refusal: poolAdmins(": this key may not see its machines"),
  },
  {
    path: "usage",
    title: "Usage",
    page: (page) => <Usage page={page} />,
    refusal: readers,
  },
  {
    path: "audit",
    title: "Audit",
    page: (page) => <Audit page={page} />,
    refusal: (page) => (isPlatformAdmin(page.session.identity) ? null : "the platform's operators"),
  },
];

/** The sections whose pages are about a tenant's own pools. */
const MACHINE_SECTIONS = ["jointokens", "nodes", "substrates", "metal"];

function clusters(page: Page): ComponentChildren {
  const id = page.path[1];
  if (id === "new") return <ClusterCreate page={page} />;
  return id ? <ClusterDetail page={page} id={id} /> : <ClusterList page={page} />;
}

/** What a key whose role a section is not for sees at its URL. */
function NotForRole(props: { title: string; who: string }) {
  return (
    <section>
      <h1>{props.title}</h1>
      <p class="empty" data-refused="role">
        {props.title} is not for your role: it is for {props.who}.
      </p>
    </section>
  );
}

/** The page of `page.path`. */
export function route(page: Page): ComponentChildren {
  const name = page.path[0] || "clusters";
  const section = SECTIONS.find((s) => s.path === name);
  if (!section) return <p class="empty">Nothing here: {name}.</p>;
  const who = section.refusal(page);
  return who ? <NotForRole title={section.title} who={who} /> : section.page(page);
}

/**
 * The navigation: the sections the key's role may use, and of the machine sections only those
 * that have a pool to show (a tenant's machines join only pools on its own accounts).
 */
export function Nav(props: { page: Page; current: string }) {
  const { page } = props;
  const shown = SECTIONS.filter((s) => s.refusal(page) === null && (!MACHINE_SECTIONS.includes(s.path) || ownPools(page)));
  return (
    <nav aria-label="Sections">
      <ul>
        {shown.map((s) => (
          <li>
            <a href={`#/${s.path}`} aria-current={props.current === s.path ? "page" : undefined}>
              {s.title}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
