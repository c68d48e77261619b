// Package plugins runs memos embedders and rerankers out of process: the
// host side of the plugin protocol. A plugin is any program that serves the
// protocol (Go authors: plugins/sdk, one Serve or ServeReranker call); Open
// starts an embedder plugin and returns an Embedder that implements
// core.Embedder and io.Closer, OpenReranker a reranker plugin as a Reranker
// (core.Reranker and io.Closer). The package registers itself as the
// embedder and the reranker named "plugin":
//
//	embedder:
//	  name: plugin
//	  plugin:
//	    path: ./my-embedder          # or a name found in PATH
//	    checksum: sha256:<hex>        # optional: refuse any other binary
//	    args: ["-model", "x"]         # optional command-line arguments
//	    env: {OLLAMA_HOST: ...}       # optional extra environment
//	    start_timeout: 30s            # optional
//	    call_timeout: 2m              # optional
//	reranker:
//	  name: plugin
//	  plugin:
//	    path: ./my-reranker          # the same keys
//
// # Protocol
//
// The transport is hashicorp/go-plugin over gRPC. The embedder service,
// defined in internal/pb/embedder.proto, has two calls: Info (model id,
// dimension, max batch, normalised) and Embed (a batch of texts in, one
// vector per text out). The reranker service (internal/pb/reranker.proto)
// has one: Rerank (a query and texts in, one score per text out). A process
// may serve both; at start the host asks which services it serves (gRPC
// reflection) and refuses a binary of the wrong kind with a message saying
// what it is; Kinds reports them. Errors travel as gRPC status codes with
// memos' error kind attached, so core.ErrInvalid, core.ErrUnavailable and
// the context errors come back as themselves; the caller's context is
// carried with every call, so a cancelled search cancels the plugin's work.
//
// # Versioning
//
// The handshake negotiates a protocol version (go-plugin VersionedPlugins);
// this build speaks ProtocolVersion 1. A plugin that speaks only another
// version is refused at Open with an error saying to rebuild it. Messages
// only ever gain fields; an incompatible change becomes version 2, and hosts
// then serve both for a while.
//
// # Security
//
// The host and the plugin authenticate each other with one-time
// certificates (go-plugin AutoMTLS), so no other process can talk to the
// plugin or impersonate it. The magic cookie in the environment is a
// usability check, not security. With checksum set, the binary's SHA-256 is
// checked right before every start (also restarts), so a replaced binary is
// refused; keep the binary where only its owner can write it.
//
// # Lifecycle
//
// Open starts the process and checks its model info (OpenReranker: its
// kind). A call that finds the process dead starts a new one and retries
// once; a call that exceeds call_timeout fails with core.ErrUnavailable (and
// context.DeadlineExceeded) naming the plugin, even when the plugin process
// is frozen; a process that then (or after the caller's own deadline, such
// as a search's rerank_timeout) does not answer a health check either is
// ended, and the next call starts a new one. The plugin's log lines
// (stderr) go to Config.Logger with their levels. Close ends the process: it
// asks the plugin to shut down and, if the plugin has not exited within a
// second (it may be stopped or wedged), kills it, so Close never waits on
// the plugin. Start and handshake are bounded by start_timeout. KillAll ends
// every plugin and is what a program calls on exit and on interrupt. On
// Linux the kernel also kills a plugin whose host died, so no plugin
// outlives memos.
package plugins
