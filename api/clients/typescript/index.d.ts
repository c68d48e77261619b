export * from "./runtime.js";
export * from "./client.js";
