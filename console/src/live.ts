// Live state without a polling loop: one `events/watch` stream per signed-in tenant, shared by
// every page. It starts after the newest event (the history is paged past once, at sign-in),
// resumes from the last cursor when the stream breaks, and hands each event to the pages that
// asked for its type; a page then reads the resources again, once per burst of events.

import { useEffect, useRef } from "preact/hooks";
import type { Client } from "../../clients/typescript/src/index.js";
import type { Event } from "../../clients/typescript/src/gen/bettercompute/compute/v1/events_pb.js";

type Listener = (event: Event) => void;

/** The event stream of one tenant. */
export class Watcher {
  private listeners = new Set<Listener>();
  private abort = new AbortController();

  constructor(
    private client: Client,
    private tenant: string,
  ) {
    void this.run();
  }

  /** Stops the stream. */
  close(): void {
    this.abort.abort();
  }

  /** Calls `listener` with each new event until the returned function is called. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The cursor of the newest event, paging through the older ones. */
  private async newest(): Promise<string> {
    let after = "";
    for (;;) {
      const page = await this.client.events.list({ tenantId: this.tenant, after, limit: 1000 });
      if (page.events.length === 0) return after;
      after = page.events[page.events.length - 1].cursor;
      if (page.events.length < 1000) return after;
    }
  }

  private async run(): Promise<void> {
    let after: string | null = null;
    let backoff = 500;
    while (!this.abort.signal.aborted) {
      try {
        after ??= await this.newest();
        const stream = this.client.events.watch({ tenantId: this.tenant, after }, { signal: this.abort.signal });
        for await (const event of stream) {
          after = event.cursor;
          backoff = 500;
          for (const listener of this.listeners) listener(event);
        }
      } catch {
        // The stream broke (the server restarted, the network blinked): resume after the last
        // event seen, waiting longer each time it breaks again at once.
      }
      if (this.abort.signal.aborted) return;
      await new Promise((resolve) => setTimeout(resolve, backoff));
      backoff = Math.min(backoff * 2, 30_000);
    }
  }
}

/**
 * Calls `reload` when an event whose type starts with one of `prefixes` (or whose subject is
 * `subject`) arrives, at most once per 150 ms: a burst of events is one reload.
 */
export function useLive(watcher: Watcher | null, prefixes: string[], reload: () => void, subject?: string): void {
  const latest = useRef(reload);
  latest.current = reload;
  const key = prefixes.join(",");
  useEffect(() => {
    if (!watcher) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const unsubscribe = watcher.subscribe((event) => {
      const wanted = prefixes.some((p) => event.type.startsWith(p)) || (subject && event.subject === subject);
      if (!wanted) return;
      clearTimeout(timer);
      timer = setTimeout(() => latest.current(), 150);
    });
    return () => {
      clearTimeout(timer);
      unsubscribe();
    };
  }, [watcher, key, subject]);
}
