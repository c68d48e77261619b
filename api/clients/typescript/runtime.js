// The hand-written part of the client: the HTTP call, errors and options.
// client.js (generated) adds one method per operation and an error class
// per error kind.

/** Where `memos serve` listens by default. */
export const DEFAULT_BASE_URL = "http://127.0.0.1:7077";

/** How long a call may take by default, in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * A failed call. `kind` is the API's error kind (not_found, invalid,
 * forbidden, ...); `status` the HTTP status, 0 when no answer came (the
 * server could not be reached, the call timed out or was aborted).
 * client.js has a subclass per kind: NotFoundError, InvalidError, ...
 */
export class MemosError extends Error {
  constructor(message, { kind, status, operation, requestId, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = new.target.name;
    this.kind = kind ?? "internal";
    this.status = status ?? 0;
    this.operation = operation ?? "";
    this.requestId = requestId ?? "";
  }
}

/** Error classes by kind, filled by client.js. */
export const errorClasses = {};

function errorFor(kind, message, fields) {
  const Class = errorClasses[kind] ?? MemosError;
  return new Class(message, { ...fields, kind });
}

/** The transport of MemosClient: base URL, token, namespace, timeout. */
export class BaseClient {
  #baseUrl;
  #token;
  #namespace;
  #timeoutMs;
  #fetch;
  #headers;

  constructor(options = {}) {
    const base = options.baseUrl ?? DEFAULT_BASE_URL;
    let url;
    try {
      url = new URL(base);
    } catch {
      throw new TypeError(`memos: baseUrl ${JSON.stringify(base)} is not a URL (e.g. ${DEFAULT_BASE_URL})`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new TypeError(`memos: baseUrl ${JSON.stringify(base)} must be an http or https URL`);
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(timeoutMs > 0)) {
      throw new TypeError(`memos: timeoutMs ${timeoutMs} must be a positive number of milliseconds`);
    }
    this.#baseUrl = base.replace(/\/+$/, "");
    this.#token = options.token || undefined;
    this.#namespace = options.namespace || undefined;
    this.#timeoutMs = timeoutMs;
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#headers = { ...(options.headers ?? {}) };
    if (typeof this.#fetch !== "function") {
      throw new TypeError("memos: no fetch: use Node 20 or later, or pass options.fetch");
    }
  }

  /** The base URL calls go to. */
  get baseUrl() {
    return this.#baseUrl;
  }

  /** The namespace calls use when they name none (undefined: the server's). */
  get namespace() {
    return this.#namespace;
  }

  /**
   * Calls an operation by name with a request object and returns its
   * decoded answer: what each generated method does. Useful for an
   * operation newer than this client.
   */
  async call(operation, request, options = {}) {
    const body = { ...(request ?? {}) };
    if (body.namespace === undefined && this.#namespace !== undefined) {
      body.namespace = this.#namespace;
    }
    const res = await this.#send(operation, `/api/mem/${operation}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    }, options);
    return this.#decode(operation, res);
  }

  /** GET /healthz: `{status: "ok", version}` when the server is up. */
  async health(options = {}) {
    const res = await this.#send("healthz", "/healthz", { method: "GET" }, options);
    return this.#decode("healthz", res);
  }

  async #send(operation, path, init, options) {
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    const signals = [AbortSignal.timeout(timeoutMs)];
    if (options.signal) signals.push(options.signal);
    const headers = { Accept: "application/json", ...this.#headers, ...init.headers };
    if (this.#token) headers.Authorization = `Bearer ${this.#token}`;
    try {
      return await this.#fetch(this.#baseUrl + path, { ...init, headers, signal: AbortSignal.any(signals) });
    } catch (err) {
      const fields = { status: 0, operation, cause: err };
      if (err?.name === "TimeoutError") {
        throw errorFor("deadline_exceeded", `${operation}: no answer from ${this.#baseUrl} within ${timeoutMs} ms`, fields);
      }
      if (err?.name === "AbortError") {
        throw errorFor("canceled", `${operation}: the call was aborted`, fields);
      }
      throw errorFor("unavailable", `${operation}: cannot reach memos at ${this.#baseUrl}: ${err?.cause?.message ?? err?.message ?? err}`, fields);
    }
  }

  async #decode(operation, res) {
    const requestId = res.headers.get("X-Request-ID") ?? "";
    let text;
    try {
      text = await res.text();
    } catch (err) {
      const kind = err?.name === "TimeoutError" ? "deadline_exceeded" : "unavailable";
      throw errorFor(kind, `${operation}: reading the answer: ${err?.message ?? err}`, { status: res.status, operation, requestId, cause: err });
    }
    let data;
    try {
      data = JSON.parse(text);
    } catch {
      data = undefined;
    }
    if (res.ok && data !== undefined) {
      return data;
    }
    const detail = data?.error;
    if (!res.ok && typeof detail?.kind === "string") {
      throw errorFor(detail.kind, String(detail.message ?? ""), { status: res.status, operation, requestId });
    }
    // Not memos' answer (a proxy's error page, a truncated body).
    throw errorFor(res.ok ? "internal" : res.status >= 500 ? "unavailable" : "invalid",
      `${operation}: HTTP ${res.status} with a body that is not memos' JSON: ${text.slice(0, 200)}`,
      { status: res.status, operation, requestId });
  }
}
