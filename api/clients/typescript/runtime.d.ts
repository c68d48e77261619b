// Types of runtime.js: the transport, options and the base error class.

/** Where `memos serve` listens by default. */
export declare const DEFAULT_BASE_URL: string;

/** How long a call may take by default, in milliseconds. */
export declare const DEFAULT_TIMEOUT_MS: number;

/** The options of MemosClient. */
export interface ClientOptions {
  /** The server's URL (default http://127.0.0.1:7077); a path prefix is kept. */
  baseUrl?: string;
  /** A bearer token (server.tokens / MEMOS_TOKEN on the server). */
  token?: string;
  /** The namespace of calls that name none (default: the server's, or the token's only one). */
  namespace?: string;
  /** How long a call may take, in milliseconds (default 30 000). */
  timeoutMs?: number;
  /** A fetch implementation (default: the global one). */
  fetch?: typeof fetch;
  /** Extra headers sent with every call. */
  headers?: Record<string, string>;
}

/** The options of one call. */
export interface CallOptions {
  /** Aborts the call (it then fails with kind canceled). */
  signal?: AbortSignal;
  /** This call's timeout, in milliseconds (default: the client's). */
  timeoutMs?: number;
}

/**
 * A failed call. `kind` is the API's error kind (not_found, invalid,
 * forbidden, ...); `status` the HTTP status, 0 when no answer came (the
 * server could not be reached, the call timed out or was aborted).
 * There is a subclass per kind: NotFoundError, InvalidError, ...
 */
export declare class MemosError extends Error {
  constructor(message: string, fields?: { kind?: string; status?: number; operation?: string; requestId?: string; cause?: unknown });
  /** The error kind, e.g. not_found. */
  readonly kind: string;
  /** The HTTP status; 0 when no answer came. */
  readonly status: number;
  /** The operation that failed, e.g. get. */
  readonly operation: string;
  /** The server's X-Request-ID of the call, for its logs. */
  readonly requestId: string;
}

/** Error classes by kind, filled by client.js. */
export declare const errorClasses: Record<string, typeof MemosError>;

/** The transport of MemosClient: base URL, token, namespace, timeout. */
export declare class BaseClient {
  constructor(options?: ClientOptions);
  /** The base URL calls go to. */
  readonly baseUrl: string;
  /** The namespace calls use when they name none (undefined: the server's). */
  readonly namespace: string | undefined;
  /**
   * Calls an operation by name with a request object and returns its
   * decoded answer: what each generated method does. Useful for an
   * operation newer than this client.
   */
  call(operation: string, request?: object, options?: CallOptions): Promise<unknown>;
  /** GET /healthz: `{status: "ok", version}` when the server is up. */
  health(options?: CallOptions): Promise<{ status: string; version: string }>;
}
