// Package pb holds the generated Go code for the plugin protocols defined in
// embedder.proto and reranker.proto. The generated files are committed because CI
// has no protoc; regenerate them after editing the .proto with
//
//	go generate ./plugins/internal/pb
//
// which needs protoc (Debian: protobuf-compiler) and, on PATH,
// protoc-gen-go v1.36.12 and protoc-gen-go-grpc v1.6.2:
//
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//	go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
package pb

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative embedder.proto reranker.proto
