package shim

import (
	"context"
	"errors"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/plugins/internal/pb"
)

// RerankerPluginName is the key of the reranker in the go-plugin plugin set.
const RerankerPluginName = "reranker"

// RerankerPlugin is the go-plugin glue for the reranker service. Impl is the
// reranker served by a plugin process; hosts leave it nil.
type RerankerPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl driver.Reranker
}

var _ plugin.GRPCPlugin = (*RerankerPlugin)(nil)

// GRPCServer registers the reranker service on s.
func (p *RerankerPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Impl == nil {
		return errors.New("memos plugin: no reranker to serve")
	}
	pb.RegisterRerankerServer(s, &RerankerServer{Impl: p.Impl})
	return nil
}

// GRPCClient returns a *RerankerClient over conn.
func (p *RerankerPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return NewRerankerClient(conn), nil
}

// RerankerServer serves a driver.Reranker as the Reranker gRPC service,
// with the request's context, errors as gRPC statuses and a panic as an
// Internal error, like Server.
type RerankerServer struct {
	pb.UnimplementedRerankerServer
	Impl driver.Reranker
}

// Rerank implements pb.RerankerServer.
func (s *RerankerServer) Rerank(ctx context.Context, req *pb.RerankRequest) (resp *pb.RerankResponse, err error) {
	defer recoverTo("reranker", &err)
	scores, err := s.Impl.Rerank(ctx, req.GetQuery(), req.GetTexts())
	if err != nil {
		return nil, ToStatus(err)
	}
	return &pb.RerankResponse{Scores: scores}, nil
}

// RerankerClient is the host side of the Reranker service: a
// driver.Reranker whose calls go to the plugin, with the caller's context.
// Errors are *Error values that unwrap to the sentinel the plugin reported.
type RerankerClient struct {
	rpc pb.RerankerClient
}

var _ driver.Reranker = (*RerankerClient)(nil)

// NewRerankerClient returns a RerankerClient over conn.
func NewRerankerClient(conn grpc.ClientConnInterface) *RerankerClient {
	return &RerankerClient{rpc: pb.NewRerankerClient(conn)}
}

// Rerank implements driver.Reranker. It does not check the answer's shape;
// the host loader does.
func (c *RerankerClient) Rerank(ctx context.Context, query string, texts []string) ([]float64, error) {
	resp, err := c.rpc.Rerank(ctx, &pb.RerankRequest{Query: query, Texts: texts})
	if err != nil {
		return nil, FromStatus(err)
	}
	return resp.GetScores(), nil
}
