// Package sdktest lets a plugin author check an embedder or a reranker in
// `go test` without building a binary: it is served on a loopback gRPC
// server through the same shims a plugin process uses, and the conformance
// cases of core/embedtest (or core/provider/rerank/reranktest) run against the host
// side.
//
//	func TestPlugin(t *testing.T)   { sdktest.Run(t, myEmbedder{}) }
//	func TestReranker(t *testing.T) { sdktest.RunReranker(t, myReranker{}) }
//
// What it does not cover, because it needs a real process: the handshake,
// checksums, restarts after a crash and the host's batch splitting. Run
// `memos plugin test ./my-plugin` on the built binary for those.
package sdktest

import (
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/embedtest"
	"github.com/memos-go/memos/core/provider/rerank/reranktest"
	"github.com/memos-go/memos/plugins/internal/pb"
	"github.com/memos-go/memos/plugins/internal/shim"
)

// Connect serves e over loopback gRPC and returns a driver.Embedder that
// calls it the way memos calls a plugin: contexts, errors (mapped to gRPC
// codes and back to core sentinels) and vectors all cross the wire. The
// server stops when the test ends.
func Connect(t testing.TB, e driver.Embedder) driver.Embedder {
	t.Helper()
	return shim.NewClient(serve(t, func(s *grpc.Server) { pb.RegisterEmbedderServer(s, &shim.Server{Impl: e}) }))
}

// ConnectReranker serves r over loopback gRPC and returns a driver.Reranker
// that calls it the way memos calls a plugin. The server stops when the
// test ends.
func ConnectReranker(t testing.TB, r driver.Reranker) driver.Reranker {
	t.Helper()
	return shim.NewRerankerClient(serve(t, func(s *grpc.Server) { pb.RegisterRerankerServer(s, &shim.RerankerServer{Impl: r}) }))
}

// serve starts a loopback gRPC server with the services register adds and
// returns a connection to it.
func serve(t testing.TB, register func(*grpc.Server)) *grpc.ClientConn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("sdktest: listen: %v", err)
	}
	srv := grpc.NewServer()
	register(srv)
	go func() { _ = srv.Serve(ln) }()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		srv.Stop()
		t.Fatalf("sdktest: dial: %v", err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		srv.Stop()
	})
	return conn
}

// Run runs the embedder conformance cases against e through the plugin
// shims, as subtests of t.
func Run(t *testing.T, e driver.Embedder) {
	t.Helper()
	embedtest.Run(t, Connect(t, e))
}

// RunReranker runs the reranker conformance cases against r through the
// plugin shims, as subtests of t.
func RunReranker(t *testing.T, r driver.Reranker) {
	t.Helper()
	reranktest.Run(t, ConnectReranker(t, r))
}
