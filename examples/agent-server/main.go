// Command agent-server is an agent loop that keeps its memory in a running
// `memos serve`, over the HTTP API: at every turn it asks for a context pack
// for the user's message and puts it in front of the prompt, then captures
// what the user revealed about themselves as memories. The model call is
// left to you (the prompt is printed instead); the capture rule here is a
// deliberately simple stand-in for asking the model to extract memories.
//
//	memos serve &
//	go run ./examples/agent-server                          # a scripted conversation
//	go run ./examples/agent-server -i                       # type your own turns
//	go run ./examples/agent-server -url http://host:7077 -token $MEMOS_TOKEN -namespace user:alice
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"
)

// client talks to memos serve.
type client struct {
	url, token, namespace string
	http                  *http.Client
}

// apiError is memos' error body.
type apiError struct {
	Error struct{ Kind, Message string } `json:"error"`
}

// call posts in to /api/mem/<op> and decodes the answer into out.
func (c *client) call(ctx context.Context, op string, in map[string]any, out any) error {
	if c.namespace != "" {
		in["namespace"] = c.namespace
	}
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+"/api/mem/"+op, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w (is memos serve running at %s?)", op, err, c.url)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return fmt.Errorf("%s: read answer: %w", op, err)
	}
	if res.StatusCode != http.StatusOK {
		var e apiError
		if json.Unmarshal(b, &e) == nil && e.Error.Kind != "" {
			return fmt.Errorf("%s: %s: %s", op, e.Error.Kind, e.Error.Message)
		}
		return fmt.Errorf("%s: HTTP %d: %s", op, res.StatusCode, b)
	}
	return json.Unmarshal(b, out)
}

// pack is the part of a context pack the loop uses.
type pack struct {
	Tokens   int `json:"tokens"`
	Memories []struct {
		ID      int64  `json:"id"`
		Version int    `json:"version"`
		Content string `json:"content"`
		Source  string `json:"source"`
	} `json:"memories"`
}

// capture is the stand-in for model-driven extraction: first-person
// sentences about the user become memories, with a significance.
func capture(turn string) (content string, significance int, ok bool) {
	for _, sentence := range strings.FieldsFunc(turn, func(r rune) bool { return r == '.' || r == '!' || r == '?' }) {
		t := strings.TrimSpace(sentence)
		lower := strings.ToLower(t)
		for _, p := range []struct {
			prefix string
			sig    int
		}{{"my name is ", 9}, {"i live ", 7}, {"i work ", 7}, {"i moved ", 7}, {"i prefer ", 6}, {"i love ", 6}, {"i hate ", 6}, {"i like ", 5}, {"my ", 5}} {
			if strings.HasPrefix(lower, p.prefix) {
				if content != "" {
					content += "; "
				}
				content += t
				significance = max(significance, p.sig)
				break
			}
		}
	}
	if content == "" {
		return "", 0, false
	}
	return "The user said: " + content, significance, true
}

var script = []string{
	"Hi! My name is Alice.",
	"I live in Lisbon and I work on the payments team.",
	"I prefer short answers with code examples.",
	"Can you remind me where I live?",
	"What do you know about how I like my answers?",
}

func main() {
	url := flag.String("url", "http://127.0.0.1:7077", "memos serve's address")
	token := flag.String("token", os.Getenv("MEMOS_TOKEN"), "bearer token, if the server has tokens")
	namespace := flag.String("namespace", "", "namespace of this agent's memories (default: the server's)")
	budget := flag.Int("budget", 300, "tokens of memory per prompt")
	interactive := flag.Bool("i", false, "read turns from standard input instead of the script")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c := &client{url: strings.TrimRight(*url, "/"), token: *token, namespace: *namespace, http: &http.Client{Timeout: 30 * time.Second}}
	session := fmt.Sprintf("agent-server-%d", time.Now().Unix())

	turns := make(chan string)
	go func() {
		defer close(turns)
		if !*interactive {
			for _, t := range script {
				turns <- t
			}
			return
		}
		sc := bufio.NewScanner(os.Stdin)
		for fmt.Print("you> "); sc.Scan(); fmt.Print("you> ") {
			turns <- sc.Text()
		}
	}()
	n := 0
	for turn := range turns {
		n++
		if err := step(ctx, c, session, n, turn, *budget); err != nil {
			fmt.Fprintln(os.Stderr, "agent-server:", err)
			if errors.Is(err, context.Canceled) {
				return
			}
			os.Exit(1)
		}
	}
}

// step is one turn: recall, prompt, capture.
func step(ctx context.Context, c *client, session string, n int, turn string, budget int) error {
	var pk pack
	if err := c.call(ctx, "context-pack", map[string]any{"query": turn, "budget": budget}, &pk); err != nil {
		return err
	}
	fmt.Printf("── turn %d ─────────────────────────────\nuser: %s\n", n, turn)
	fmt.Printf("prompt sent to the model (%d tokens of memory):\n", pk.Tokens)
	fmt.Println("  [system] What you remember about the user (cite by #id):")
	for _, m := range pk.Memories {
		fmt.Printf("  - #%d v%d %s (%s)\n", m.ID, m.Version, m.Content, m.Source)
	}
	if len(pk.Memories) == 0 {
		fmt.Println("  (nothing relevant yet)")
	}
	fmt.Printf("  [user] %s\n", turn)
	if content, sig, ok := capture(turn); ok {
		var m struct {
			ID int64 `json:"id"`
		}
		err := c.call(ctx, "remember", map[string]any{"content": content, "significance": sig, "type": "fact",
			"source": fmt.Sprintf("%s#turn-%d", session, n), "session": session, "trust": "certain"}, &m)
		if err != nil {
			return err
		}
		fmt.Printf("captured memory #%d (significance %d)\n", m.ID, sig)
	}
	return nil
}
