// Command testhost opens the plugin named by its first argument, prints
// "ready" and waits to be killed; the tests kill it to check that the
// plugin does not outlive its host.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/memos-go/memos/plugins"
)

func main() {
	e, err := plugins.Open(context.Background(), plugins.Config{Path: os.Args[1]})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer e.Close()
	fmt.Println("ready")
	time.Sleep(time.Hour)
}
