// Which page a fragment shows (`#/clusters`, `#/clusters/new`, `#/clusters/kcl_...`,
// `#/substrates/pool_...`, `#/metal/pool_.../node_...`), and the navigation between them.

import type { ComponentChildren } from "preact";
import type { Watcher } from "./live.js";
import type { Session } from "./session.js";
import { ClusterCreate, ClusterDetail, ClusterList } from "./pages/clusters.js";
import { KINDS, ResourceCreate, ResourceDetail, ResourceList } from "./pages/resources.js";
import { JoinTokens, Nodes } from "./pages/machines.js";
import { Substrates } from "./pages/substrates.js";
import { Metal } from "./pages/metal.js";
import { Audit, Usage } from "./pages/operator.js";

/** What every page is given. */
export interface Page {
  session: Session;
  /** The tenant shown. */
  tenant: string;
  /** Its event stream. */
  watcher: Watcher | null;
  /** Whether the key may create and delete in the tenant. */
  writable: boolean;
  /** The fragment's segments: `["clusters", "kcl_..."]`. */
  path: string[];
}

/** The page of `page.path`. */
export function route(page: Page): ComponentChildren {
  const [section = "clusters", id] = page.path;
  if (section === "clusters" || section === "") {
    if (id === "new") return <ClusterCreate page={page} />;
    return id ? <ClusterDetail page={page} id={id} /> : <ClusterList page={page} />;
  }
  const kind = KINDS.find((k) => k.path === section);
  if (kind) {
    if (id === "new") return <ResourceCreate page={page} kind={kind} />;
    return id ? <ResourceDetail page={page} kind={kind} id={id} /> : <ResourceList page={page} kind={kind} />;
  }
  if (section === "jointokens") return <JoinTokens page={page} />;
  if (section === "nodes") return <Nodes page={page} />;
  if (section === "substrates") return <Substrates page={page} />;
  if (section === "metal") return <Metal page={page} />;
  if (section === "usage") return <Usage page={page} />;
  if (section === "audit") return <Audit page={page} />;
  return <p>Nothing here: {section}.</p>;
}

/** The navigation; operators also see usage and audit. */
export function Nav(props: { operator: boolean; current: string }) {
  const links: [string, string][] = [
    ["clusters", "Clusters"],
    ...KINDS.map((k): [string, string] => [k.path, k.title]),
    ["jointokens", "Join tokens"],
    ["nodes", "Nodes"],
    ["substrates", "Substrates"],
    ["metal", "Bare metal"],
    ...(props.operator ? ([["usage", "Usage"], ["audit", "Audit"]] as [string, string][]) : []),
  ];
  return (
    <nav aria-label="Sections">
      <ul>
        {links.map(([path, title]) => (
          <li>
            <a href={`#/${path}`} aria-current={props.current === path ? "page" : undefined}>
              {title}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
