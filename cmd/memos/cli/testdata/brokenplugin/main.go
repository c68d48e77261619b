// Command brokenplugin is an embedder plugin that breaks the rules on
// purpose, for the CLI's tests. Its first argument picks how:
//
//	inconsistent   a text's vector depends on the size of its batch
//	hang <file>    Embed writes the process id to file, then never returns
//	               and ignores its context
//	stop <file>    Embed writes the process id to file, then stops the
//	               whole process (SIGSTOP), as a debugger would, and again
//	               whenever it is continued, so it never answers
package main

import (
	"context"
	"os"
	"strconv"
	"syscall"

	"github.com/memos-go/memos/plugins/sdk"
)

type broken struct{ mode, pidfile string }

func (broken) Info(context.Context) (sdk.ModelInfo, error) {
	return sdk.ModelInfo{ID: "broken-v1-8", Dim: 8, MaxBatch: 2, Normalized: true}, nil
}

func (b broken) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	switch b.mode {
	case "hang":
		_ = os.WriteFile(b.pidfile, []byte(strconv.Itoa(os.Getpid())), 0o644)
		select {}
	case "stop":
		_ = os.WriteFile(b.pidfile, []byte(strconv.Itoa(os.Getpid())), 0o644)
		for {
			_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i := range texts {
		v := make([]float32, 8)
		v[len(texts)%8] = 1
		out[i] = v
	}
	return out, nil
}

func main() {
	var b broken
	if len(os.Args) > 1 {
		b.mode = os.Args[1]
	}
	if len(os.Args) > 2 {
		b.pidfile = os.Args[2]
	}
	sdk.Serve(b)
}
