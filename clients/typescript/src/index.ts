// TypeScript client of the better-compute API, over gRPC-web (which the server speaks through
// tonic-web, on the same port as gRPC and JSON), for browsers and Node alike.
//
// The messages and service descriptors in ./gen are generated from proto/ by protoc-gen-es
// (clients/generate); this file is the thin layer around them: a Client that sends the bearer
// token on every call, retries calls answered UNAVAILABLE, and throws one error type, ApiError,
// carrying the API's code string and details.

import { Code, ConnectError, createClient } from "@connectrpc/connect";
import type { Client as ServiceClient, Interceptor, Transport } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import type { DescService, JsonObject } from "@bufbuild/protobuf";
import { toJson } from "@bufbuild/protobuf";
import { StructSchema } from "@bufbuild/protobuf/wkt";
import { ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";
import { services } from "./services.js";

export { services } from "./services.js";
export * as tenants from "./gen/bettercompute/platform/v1/tenants_pb.js";

/** The API's code string of a status that carries none (one the transport made), as the server maps them. */
const CODE_OF_STATUS: Partial<Record<Code, string>> = {
  [Code.InvalidArgument]: "INVALID_INPUT",
  [Code.OutOfRange]: "INVALID_INPUT",
  [Code.Unauthenticated]: "UNAUTHENTICATED",
  [Code.PermissionDenied]: "ACCESS_DENIED",
  [Code.NotFound]: "NOT_FOUND",
  [Code.Unimplemented]: "NOT_FOUND",
  [Code.AlreadyExists]: "CONFLICT",
  [Code.Aborted]: "CONFLICT",
  [Code.FailedPrecondition]: "INVALID_STATE",
  [Code.ResourceExhausted]: "QUOTA_EXCEEDED",
  [Code.Unavailable]: "UNAVAILABLE",
  [Code.DeadlineExceeded]: "UNAVAILABLE",
  [Code.Canceled]: "UNAVAILABLE",
};

/**
 * A failed call: the API's code string (`NOT_FOUND`, ...) from the google.rpc.ErrorInfo reason,
 * the message, and the details from the google.protobuf.Struct (`{fields: [...]}` for
 * `INVALID_INPUT`). `status` is the gRPC status code; `cause` the ConnectError.
 */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details: JsonObject,
    readonly status: Code,
    options?: { cause?: unknown },
  ) {
    super(`${code}: ${message}`, options);
    this.name = "ApiError";
  }

  /** The ApiError of any error a call threw. */
  static from(error: unknown): ApiError {
    if (error instanceof ApiError) return error;
    const connect = ConnectError.from(error);
    const info = connect.findDetails(ErrorInfoSchema)[0];
    const struct = connect.findDetails(StructSchema)[0];
    const details = struct ? (toJson(StructSchema, struct) as JsonObject) : {};
    const code = info?.reason || CODE_OF_STATUS[connect.code] || "INTERNAL";
    return new ApiError(code, connect.rawMessage, details, connect.code, { cause: error });
  }
}

/** How a Client calls. */
export interface ClientOptions {
  /** Times a call answered UNAVAILABLE is tried again (3). */
  retries?: number;
  /** Milliseconds before the first retry, doubled for each next one (200). */
  backoffMs?: number;
  /** The transport to use instead of gRPC-web to `endpoint` (tests use an in-memory one). */
  transport?: (interceptors: Interceptor[]) => Transport;
}

/** The interceptors of every Client: UNAVAILABLE is retried, the token is sent. */
export function interceptors(token: string, options: ClientOptions = {}): Interceptor[] {
  const retries = options.retries ?? 3;
  const backoffMs = options.backoffMs ?? 200;
  const retry: Interceptor = (next) => async (request) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await next(request);
      } catch (error) {
        const unavailable = ConnectError.from(error).code === Code.Unavailable;
        // A stream may have been read from; only a unary call is safe to send again.
        if (!unavailable || request.stream || attempt >= retries) throw error;
        await new Promise((resolve) => setTimeout(resolve, backoffMs * 2 ** attempt));
      }
    }
  };
  const bearer: Interceptor = (next) => (request) => {
    request.header.set("authorization", `Bearer ${token}`);
    return next(request);
  };
  return [retry, bearer];
}

/** A client of each service of the API, by property name (`tenants`, `apiKeys`, ...). */
export type ServiceClients = { readonly [K in keyof typeof services]: ServiceClient<(typeof services)[K]> };

/**
 * A connection to the API at `endpoint` (`http://127.0.0.1:8080`) calling as `token`
 * (`bck_<id>.<secret>`). Each service is a property (`client.tenants`, `client.apiKeys`, ...)
 * whose methods take the request fields and resolve to the response message, or reject with an
 * ApiError; a server stream (`client.events.watch`) is an async iterable.
 */
export interface Client extends ServiceClients {}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class Client {
  readonly transport: Transport;

  constructor(endpoint: string, token: string, options: ClientOptions = {}) {
    const chain = interceptors(token, options);
    this.transport = options.transport
      ? options.transport(chain)
      : createGrpcWebTransport({ baseUrl: endpoint, interceptors: chain });
    for (const [property, descriptor] of Object.entries(services)) {
      Object.defineProperty(this, property, { value: this.service(descriptor), enumerable: true });
    }
  }

  /** A service of the API by its generated descriptor, wrapped like `client.tenants`. */
  service<S extends DescService>(descriptor: S): ServiceClient<S> {
    const client = createClient(descriptor, this.transport) as Record<string, unknown>;
    // Connect turns whatever an interceptor throws into a ConnectError, so the ApiError is made
    // here, around each method: unary methods return promises, server streams async iterables.
    const wrapped: Record<string, unknown> = {};
    for (const [name, method] of Object.entries(client)) {
      wrapped[name] = (...args: unknown[]) => {
        const result = (method as (...a: unknown[]) => unknown)(...args);
        if (result instanceof Promise) {
          return result.catch((error: unknown) => {
            throw ApiError.from(error);
          });
        }
        return apiErrors(result as AsyncIterable<unknown>);
      };
    }
    return wrapped as ServiceClient<S>;
  }
}

/** A server stream whose errors are ApiError. */
async function* apiErrors<T>(stream: AsyncIterable<T>): AsyncIterable<T> {
  try {
    yield* stream;
  } catch (error) {
    throw ApiError.from(error);
  }
}
