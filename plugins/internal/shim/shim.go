// Package shim is the part of the plugin protocol that both sides share: the
// go-plugin handshake, the plugin sets, and the gRPC shims that turn a
// driver.Embedder into the Embedder service (Server) and back (Client), and a
// driver.Reranker into the Reranker service (RerankerServer) and back
// (RerankerClient). It is internal so that authors see only plugins/sdk and
// hosts only plugins.
package shim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime/debug"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/plugins/internal/pb"
)

// ProtocolVersion is the embedder plugin protocol version this build speaks.
// Bump it (and keep serving the old one in VersionedPlugins) when a change
// cannot be ignored by one side.
const ProtocolVersion = 1

// PluginName is the key of the embedder in the go-plugin plugin set.
const PluginName = "embedder"

// The magic cookie: the host sets the environment variable MagicCookieKey to
// MagicCookieValue when it starts a plugin, and a plugin refuses to serve
// without it. The value is a fixed random string, so that no unrelated
// variable matches by accident; it never changes (incompatible protocol
// changes bump ProtocolVersion instead), and plugins written in other
// languages check the same pair (see pb/embedder.proto). It is a UX check (a
// user running a plugin binary by hand gets a friendly message), not
// security: that comes from AutoMTLS and the optional checksum.
const (
	MagicCookieKey   = "MEMOS_PLUGIN"
	MagicCookieValue = "4a96db3ced297c3bdaad9236844a21d4"
)

// Handshake is the go-plugin handshake.
var Handshake = plugin.HandshakeConfig{
	MagicCookieKey:   MagicCookieKey,
	MagicCookieValue: MagicCookieValue,
}

// Plugins returns the versioned plugin set a plugin process serves: the
// embedder service if e is not nil, the reranker service if r is not nil.
func Plugins(e driver.Embedder, r driver.Reranker) map[int]plugin.PluginSet {
	set := plugin.PluginSet{}
	if e != nil {
		set[PluginName] = &Plugin{Impl: e}
	}
	if r != nil {
		set[RerankerPluginName] = &RerankerPlugin{Impl: r}
	}
	return map[int]plugin.PluginSet{ProtocolVersion: set}
}

// HostPlugins returns the versioned plugin set a host consumes: every kind,
// so that it can dispense whichever the configuration asks for.
func HostPlugins() map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		ProtocolVersion: {PluginName: &Plugin{}, RerankerPluginName: &RerankerPlugin{}},
	}
}

// Plugin is the go-plugin glue for the embedder service. Impl is the
// embedder served by a plugin process; hosts leave it nil.
type Plugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl driver.Embedder
}

var _ plugin.GRPCPlugin = (*Plugin)(nil)

// GRPCServer registers the embedder service on s.
func (p *Plugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Impl == nil {
		return errors.New("memos plugin: no embedder to serve")
	}
	pb.RegisterEmbedderServer(s, &Server{Impl: p.Impl})
	return nil
}

// GRPCClient returns a *Client over conn.
func (p *Plugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return &Client{rpc: pb.NewEmbedderClient(conn)}, nil
}

// Server serves a driver.Embedder as the Embedder gRPC service. It passes the
// request's context (cancelled when the host cancels) to the embedder, turns
// errors into gRPC statuses and a panic into an Internal error, so that one
// bad input does not kill the process.
type Server struct {
	pb.UnimplementedEmbedderServer
	Impl driver.Embedder
}

// Info implements pb.EmbedderServer.
func (s *Server) Info(ctx context.Context, _ *pb.InfoRequest) (resp *pb.InfoResponse, err error) {
	defer recoverTo("embedder", &err)
	mi, err := s.Impl.Info(ctx)
	if err != nil {
		return nil, ToStatus(err)
	}
	return &pb.InfoResponse{
		Id:         mi.ID,
		Dim:        int32(mi.Dim),
		MaxBatch:   int32(mi.MaxBatch),
		Normalized: mi.Normalized,
	}, nil
}

// Embed implements pb.EmbedderServer.
func (s *Server) Embed(ctx context.Context, req *pb.EmbedRequest) (resp *pb.EmbedResponse, err error) {
	defer recoverTo("embedder", &err)
	vs, err := s.Impl.Embed(ctx, req.GetTexts())
	if err != nil {
		return nil, ToStatus(err)
	}
	data, dim, err := encode(vs)
	if err != nil {
		return nil, ToStatus(err)
	}
	return &pb.EmbedResponse{Vectors: data, Dim: int32(dim)}, nil
}

// encode packs vectors of one length into little-endian float32 bytes.
func encode(vs [][]float32) ([]byte, int, error) {
	if len(vs) == 0 {
		return nil, 0, nil
	}
	dim := len(vs[0])
	data := make([]byte, 0, 4*dim*len(vs))
	for i, v := range vs {
		if len(v) != dim {
			return nil, 0, fmt.Errorf("%w: the embedder returned vectors of different lengths (%d for text 0, %d for text %d)",
				driver.ErrDimensionMismatch, dim, len(v), i)
		}
		for _, x := range v {
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(x))
		}
	}
	return data, dim, nil
}

// decode unpacks n vectors of dim floats. Each vector has its own capacity,
// so appending to one cannot overwrite the next.
func decode(data []byte, dim int) ([][]float32, error) {
	if len(data) == 0 {
		return [][]float32{}, nil
	}
	if dim <= 0 || len(data)%(4*dim) != 0 {
		return nil, fmt.Errorf("malformed answer from the plugin: %d bytes of vectors with dimension %d", len(data), dim)
	}
	flat := make([]float32, len(data)/4)
	for i := range flat {
		flat[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	out := make([][]float32, len(flat)/dim)
	for i := range out {
		out[i] = flat[i*dim : (i+1)*dim : (i+1)*dim]
	}
	return out, nil
}

// recoverTo turns a panic of the served kind ("embedder", "reranker") into
// an error answer, so that one bad input does not kill the process.
func recoverTo(kind string, err *error) {
	if p := recover(); p != nil {
		*err = ToStatus(fmt.Errorf("%s panicked: %v\n%s", kind, p, debug.Stack()))
	}
}

// Client is the host side of the Embedder service: a driver.Embedder whose
// calls go to the plugin. The caller's context travels with every call, so
// cancelling it cancels the plugin's work. Errors are *Error values that
// unwrap to the core sentinel (or context error) the plugin reported.
type Client struct {
	rpc pb.EmbedderClient
}

var _ driver.Embedder = (*Client)(nil)

// NewClient returns a Client over conn.
func NewClient(conn grpc.ClientConnInterface) *Client {
	return &Client{rpc: pb.NewEmbedderClient(conn)}
}

// Info implements driver.Embedder.
func (c *Client) Info(ctx context.Context) (driver.ModelInfo, error) {
	resp, err := c.rpc.Info(ctx, &pb.InfoRequest{})
	if err != nil {
		return driver.ModelInfo{}, FromStatus(err)
	}
	return driver.ModelInfo{
		ID:         resp.GetId(),
		Dim:        int(resp.GetDim()),
		MaxBatch:   int(resp.GetMaxBatch()),
		Normalized: resp.GetNormalized(),
	}, nil
}

// Embed implements driver.Embedder. It does not check the answer's shape; the
// host loader does, against the model info.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	resp, err := c.rpc.Embed(ctx, &pb.EmbedRequest{Texts: texts})
	if err != nil {
		return nil, FromStatus(err)
	}
	return decode(resp.GetVectors(), int(resp.GetDim()))
}
