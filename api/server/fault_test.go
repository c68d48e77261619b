package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memos-go/memos/api/server"
	"github.com/memos-go/memos/core"
)

// load is a set of clients that remember memories until stopped.
type load struct {
	mu    sync.Mutex
	acked []int64 // ids the server acknowledged with 200
	wg    sync.WaitGroup
}

// writers starts n clients that each write up to max memories until stop
// is closed or the server goes away.
func writers(l *live, n, max int, stop <-chan struct{}) *load {
	ld := &load{}
	for w := range n {
		ld.wg.Go(func() {
			for i := range max {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Sprintf(`{"content":"writer %d note %d about shutdown drills"}`, w, i)
				res, err := http.Post(l.url+"/api/mem/remember", "application/json", strings.NewReader(body))
				if err != nil {
					return // the server went away: not acknowledged
				}
				var m core.Memory
				err = json.NewDecoder(res.Body).Decode(&m)
				res.Body.Close()
				if res.StatusCode == 200 && err == nil {
					ld.mu.Lock()
					ld.acked = append(ld.acked, m.ID)
					ld.mu.Unlock()
				}
			}
		})
	}
	return ld
}

// checkStored reopens the store and checks every acknowledged id is there.
func checkStored(t *testing.T, path string, ids []int64) {
	t.Helper()
	eng := openEngine(t, path)
	defer eng.Close()
	for _, id := range ids {
		if _, err := eng.Get(context.Background(), id); err != nil {
			t.Errorf("acknowledged memory %d is lost: %v", id, err)
		}
	}
}

// TestShutdownUnderLoad stops the server while clients write: every write
// the server acknowledged is in the store afterwards, and the engine's
// snapshot is written on close.
func TestShutdownUnderLoad(t *testing.T) {
	l := start(t, server.Options{})
	stop := make(chan struct{})
	ld := writers(l, 4, 500, stop)
	// Let some writes land, then shut down mid-stream.
	deadline := time.Now().Add(time.Minute)
	for {
		ld.mu.Lock()
		n := len(ld.acked)
		ld.mu.Unlock()
		if n >= 20 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	l.stop(t)
	close(stop)
	ld.wg.Wait()
	if err := l.eng.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(l.path + ".vectors"); err != nil {
		t.Errorf("closing the engine after the shutdown wrote no vector snapshot: %v", err)
	}
	if len(ld.acked) < 20 {
		t.Fatalf("only %d writes were acknowledged before the shutdown", len(ld.acked))
	}
	checkStored(t, l.path, ld.acked)
}

// TestClientDisconnect cuts connections mid-request (half a body; a full
// request whose answer is never read) while other clients write: the server
// keeps serving and loses none of their acknowledged writes.
func TestClientDisconnect(t *testing.T) {
	l := start(t, server.Options{})
	addr := strings.TrimPrefix(l.url, "http://")
	for i := range 10 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf(`{"content":"disconnected client %d"}`, i)
		fmt.Fprintf(c, "POST /api/mem/remember HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", len(body))
		if i%2 == 0 {
			c.Write([]byte(body[:len(body)/2])) // half a body, then gone
		} else {
			c.Write([]byte(body)) // a whole request, answer never read
		}
		c.Close()
	}
	var ids []int64
	for i := range 20 {
		var m core.Memory
		l.must(t, "remember", obj{"content": fmt.Sprintf("steady client note %d", i)}, &m)
		ids = append(ids, m.ID)
	}
	var res core.SearchResult
	l.must(t, "search", obj{"query": `"disconnected client"`, "mode": "fts", "limit": 100}, &res)
	for _, h := range res.Hits {
		var n int
		if _, err := fmt.Sscanf(h.Memory.Content, "disconnected client %d", &n); err != nil || n%2 == 0 {
			t.Errorf("a half-sent request was stored: %q", h.Memory.Content)
		}
	}
	l.stop(t)
	l.eng.Close()
	checkStored(t, l.path, ids)
}

// TestSlowClient sends a request body a few bytes at a time while other
// clients write: they are not held up behind it, and its write is stored
// once its body is complete.
func TestSlowClient(t *testing.T) {
	l := start(t, server.Options{})
	addr := strings.TrimPrefix(l.url, "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := `{"content":"a slow client's careful note"}`
	fmt.Fprintf(c, "POST /api/mem/remember HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", len(body))
	slowDone := make(chan error, 1)
	go func() {
		for i := 0; i < len(body); i += 4 {
			if _, err := c.Write([]byte(body[i:min(i+4, len(body))])); err != nil {
				slowDone <- err
				return
			}
			time.Sleep(15 * time.Millisecond)
		}
		slowDone <- nil
	}()
	// While the slow body trickles in, others are served.
	var ids []int64
	for i := range 10 {
		var m core.Memory
		l.must(t, "remember", obj{"content": fmt.Sprintf("fast client note %d", i)}, &m)
		ids = append(ids, m.ID)
	}
	if err := <-slowDone; err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(time.Minute))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	var m core.Memory
	json.NewDecoder(res.Body).Decode(&m)
	res.Body.Close()
	if res.StatusCode != 200 || m.ID == 0 {
		t.Fatalf("slow client: %d %+v", res.StatusCode, m)
	}
	l.stop(t)
	l.eng.Close()
	checkStored(t, l.path, append(ids, m.ID))
}
