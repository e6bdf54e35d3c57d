// The TypeScript client against a running server over gRPC-web (BC_ENDPOINT, BC_TOKEN and
// BC_TENANT, set by tests/it/clients.rs), and its retries against an in-memory transport.

import { test } from "node:test";
import assert from "node:assert/strict";
import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import type { Interceptor } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { ApiError, Client, tenants } from "../src/index.js";

function env(name: string): string {
  const value = process.env[name];
  assert.ok(value, `${name} is not set: run this through tests/run (tests/it/clients.rs)`);
  return value;
}

async function rejection(promise: Promise<unknown>, code: string): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ApiError, `not an ApiError: ${error}`);
    assert.equal(error.code, code, error.message);
    return error;
  }
  assert.fail(`expected ${code}, the call succeeded`);
}

test("creates a tenant and reads it back over gRPC-web", async () => {
  const client = new Client(env("BC_ENDPOINT"), env("BC_TOKEN"));
  // Every service of proto/ is on the client, named after it.
  for (const service of ["tenants", "apiKeys", "principals", "roleBindings", "audit", "events", "usage"] as const) {
    assert.equal(typeof client[service].list, "function", service);
  }
  const id = env("BC_TENANT");
  const created = await client.tenants.create({ id, displayName: "TypeScript client" });
  const read = await client.tenants.get({ tenantId: id });
  assert.equal(read.id, id);
  assert.equal(read.displayName, "TypeScript client");
  assert.equal(read.state, "active");
  assert.equal(read.version, 1n);
  assert.deepEqual(read.createdAt, created.createdAt);

  await rejection(client.tenants.create({ id }), "CONFLICT");
  const invalid = await rejection(client.tenants.create({ id: "no spaces" }), "INVALID_INPUT");
  assert.deepEqual(
    (invalid.details.fields as { field: string }[]).map((f) => f.field),
    ["id"],
  );
  const missing = await rejection(client.tenants.get({ tenantId: "nobody" }), "NOT_FOUND");
  assert.deepEqual(missing.details, { resource: "tenant", id: "nobody" });
  const stranger = new Client(env("BC_ENDPOINT"), "bck_nobody.nothing");
  await rejection(stranger.tenants.get({ tenantId: id }), "UNAUTHENTICATED");
});

function flaky(failures: number) {
  const seen = { calls: 0, authorization: "" };
  const transport = (interceptors: Interceptor[]) =>
    createRouterTransport(
      ({ service }) => {
        service(tenants.Tenants, {
          get(request, context) {
            seen.calls++;
            seen.authorization = context.requestHeader.get("authorization") ?? "";
            if (seen.calls <= failures) throw new ConnectError("try again", Code.Unavailable);
            return create(tenants.TenantSchema, { id: request.tenantId, state: "active", version: 1n });
          },
        });
      },
      { transport: { interceptors } },
    );
  return { seen, client: new Client("http://unused", "bck_a.b", { retries: 3, backoffMs: 1, transport }) };
}

test("retries UNAVAILABLE, then gives up with an ApiError", async () => {
  const twice = flaky(2);
  assert.equal((await twice.client.tenants.get({ tenantId: "flaky" })).id, "flaky");
  assert.equal(twice.seen.calls, 3);
  assert.equal(twice.seen.authorization, "Bearer bck_a.b");

  const always = flaky(100);
  await rejection(always.client.tenants.get({ tenantId: "flaky" }), "UNAVAILABLE");
  assert.equal(always.seen.calls, 4);
});
