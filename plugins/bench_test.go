package plugins_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/embedtest"
	"github.com/memos-go/memos/embedders/hash"
	"github.com/memos-go/memos/plugins"
	"github.com/memos-go/memos/plugins/internal/testrerank"
)

func TestHashPluginConformance(t *testing.T) {
	e := open(t, "hash", nil, nil)
	embedtest.Run(t, e)
	h, _ := hash.New(hash.Config{})
	texts := []string{"the same vectors", "in process and out", ""}
	want, _ := h.Embed(t.Context(), texts)
	got, err := e.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatal("the hash plugin's vectors differ from the in-process hash embedder's")
	}
}

func benchTexts(n int) []string {
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf("Memory %d: Alice told Bob that she prefers open-source tools and will move the review to Thursday", i)
	}
	return texts
}

// cpuTime returns the CPU time used so far by this process and, if pid is
// not 0, by process pid (from /proc, in clock ticks of 10ms).
func cpuTime(b *testing.B, pid int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	d := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	if pid != 0 {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			b.Fatal(err)
		}
		f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
		ut, _ := strconv.Atoi(f[11])
		st, _ := strconv.Atoi(f[12])
		d += time.Duration(ut+st) * 10 * time.Millisecond
	}
	return d
}

// BenchmarkEmbed compares one batch through the hash embedder in process
// and through the same embedder running as a plugin; ns/op is per batch
// (wall time), cpu-ns/op the CPU time of host and plugin together, which a
// busy machine disturbs less.
func BenchmarkEmbed(b *testing.B) {
	h, err := hash.New(hash.Config{})
	if err != nil {
		b.Fatal(err)
	}
	pidfile := filepath.Join(b.TempDir(), "pid")
	p := open(b, "hash", map[string]string{"MEMOS_TESTPLUGIN_PIDFILE": pidfile}, nil)
	data, err := os.ReadFile(pidfile)
	if err != nil {
		b.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(data))
	for _, n := range []int{1, 16, 64, 256} {
		texts := benchTexts(n)
		for _, c := range []struct {
			name string
			e    driver.Embedder
			pid  int
		}{{"inprocess", h, 0}, {"plugin", p, pid}} {
			b.Run(fmt.Sprintf("batch=%d/%s", n, c.name), func(b *testing.B) {
				ctx := context.Background()
				cpu0 := cpuTime(b, c.pid)
				for b.Loop() {
					if _, err := c.e.Embed(ctx, texts); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cpuTime(b, c.pid)-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// BenchmarkStart measures starting a plugin (process start, AutoMTLS
// handshake, Info) and closing it.
func BenchmarkStart(b *testing.B) {
	cfg := config(b, "hash", nil, nil)
	for b.Loop() {
		e, err := plugins.Open(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		e.Close()
	}
}

// BenchmarkProtocol measures the protocol alone: a plugin that returns a
// precomputed 256-dimension vector for every text.
func BenchmarkProtocol(b *testing.B) {
	p := open(b, "const", nil, nil)
	for _, n := range []int{1, 16, 64, 256} {
		texts := benchTexts(n)
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				if _, err := p.Embed(ctx, texts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRerank measures one rerank of 30 candidates (search.rerank_top's
// default) by the test reranker in process and through a plugin process.
func BenchmarkRerank(b *testing.B) {
	texts := benchTexts(30)
	for _, where := range []string{"inprocess", "plugin"} {
		b.Run(where, func(b *testing.B) {
			var r driver.Reranker = testrerank.Reranker{}
			if where == "plugin" {
				r = openReranker(b, "good", nil, nil)
			}
			ctx := context.Background()
			for b.Loop() {
				if _, err := r.Rerank(ctx, "when is the review with Alice", texts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
