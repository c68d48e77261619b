package bolt

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

// storeWithSecret creates a store in dir holding 200 fillers and a memory
// with secretWord, closes it, checks that the secret is in its files, and
// returns the secret memory's id.
func storeWithSecret(t *testing.T, dir string) int64 {
	t.Helper()
	d, err := Open(context.Background(), Config{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	victim := secretMemory("the vault code is " + secretWord + " until spring")
	if err := d.Update(context.Background(), func(tx driver.Tx) error {
		for i := range 200 {
			if err := tx.Insert(testMemory(fmt.Sprintf("filler memory number %d", i))); err != nil {
				return err
			}
		}
		return tx.Insert(victim)
	}); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if got := filesContaining(t, dir, secretWord); !slices.Contains(got, StoreFile) {
		t.Fatalf("before the delete, %s does not hold the secret (files with it: %v); the test proves nothing", StoreFile, got)
	}
	return victim.ID
}

// checkErased fails the test unless no file in dir holds the secret and the
// store is intact.
func checkErased(t *testing.T, d *DB, when string) {
	t.Helper()
	if got := filesContaining(t, d.dir, secretWord); len(got) > 0 {
		t.Errorf("%s: files %v still contain the forgotten word", when, got)
	}
	hits, err := d.SearchKeyword(context.Background(), &query.Term{Text: "filler"}, driver.Filter{}, 1000)
	if err != nil || len(hits) != 200 {
		t.Errorf("%s: the other memories: %d hits, %v; want 200", when, len(hits), err)
	}
	if err := d.bdb.View(func(tx *bbolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	}); err != nil {
		t.Errorf("%s: bbolt consistency check: %v", when, err)
	}
}

// TestEraseAfterConcurrentReader holds a read transaction across a delete:
// the scrub of the free pages cannot run while it may still use them, so
// erasure is pending; when that reader ends, it runs the scrub itself, and
// the files are clean while the store stays open.
func TestEraseAfterConcurrentReader(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	id := storeWithSecret(t, dir)
	d := reopen(t, dir)
	defer d.Close()
	scrubWait = 20 * time.Millisecond
	t.Cleanup(func() { scrubWait = 2 * time.Second })

	viewing, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- d.View(ctx, func(tx driver.ReadTx) error {
			if _, err := tx.Get(id, 0); err != nil {
				return err
			}
			close(viewing)
			<-release
			return nil
		})
	}()
	<-viewing
	update(t, d, func(tx driver.Tx) error { return tx.Delete(id) })
	if erased, err := d.Erase(ctx, 0); err != nil || erased {
		t.Fatalf("Erase while a reader of the old pages is open = %v, %v; want pending", erased, err)
	}
	if got := filesContaining(t, dir, secretWord); !slices.Contains(got, StoreFile) {
		t.Fatalf("with the reader open, %s no longer holds the word (files: %v); the case proves nothing", StoreFile, got)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if d.scrubFile.Load() {
		t.Error("the scrub is still pending after the last reader that blocked it ended")
	}
	if erased, err := d.Erase(ctx, 0); err != nil || !erased {
		t.Fatalf("Erase after the reader ended = %v, %v; want done", erased, err)
	}
	checkErased(t, d, "after the reader ended, store open")
}

const eraseChildEnv = "MEMOS_BOLT_ERASE_CHILD"

// TestErasePendingSurvivesKill kills (SIGKILL) a process whose scrub after a
// delete is pending because a reader was open: the next Open completes it.
func TestErasePendingSurvivesKill(t *testing.T) {
	if dir := os.Getenv(eraseChildEnv); dir != "" {
		eraseChild(dir)
		return
	}
	dir := filepath.Join(t.TempDir(), "store")
	id := storeWithSecret(t, dir)
	cmd := exec.Command(os.Args[0], "-test.run=^TestErasePendingSurvivesKill$", "-test.v=false")
	cmd.Env = append(os.Environ(), eraseChildEnv+"="+dir, fmt.Sprintf("%s_ID=%d", eraseChildEnv, id))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "deleted, scrub pending" {
		t.Fatalf("child: %q, %v", lines.Text(), lines.Err())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if got := filesContaining(t, dir, secretWord); len(got) == 0 {
		t.Fatal("after the kill, no file holds the word; the case proves nothing")
	}
	d := reopen(t, dir)
	defer d.Close()
	checkErased(t, d, "after the next Open")
	if err := d.View(context.Background(), func(tx driver.ReadTx) error {
		_, err := tx.Get(id, 0)
		return err
	}); err == nil {
		t.Error("the deleted memory came back")
	}
}

// eraseChild deletes the secret memory while a read transaction is open,
// reports that the scrub is pending, and waits to be killed.
func eraseChild(dir string) {
	var id int64
	fmt.Sscan(os.Getenv(eraseChildEnv+"_ID"), &id)
	scrubWait = 10 * time.Millisecond
	ctx := context.Background()
	d, err := Open(ctx, Config{Path: dir})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	viewing := make(chan struct{})
	go d.View(ctx, func(tx driver.ReadTx) error {
		close(viewing)
		select {} // held until the process is killed
	})
	<-viewing
	if err := d.Update(ctx, func(tx driver.Tx) error { return tx.Delete(id) }); err != nil {
		fmt.Println("delete:", err)
		os.Exit(1)
	}
	if !d.scrubFile.Load() {
		fmt.Println("the scrub ran despite the reader")
		os.Exit(1)
	}
	fmt.Println("deleted, scrub pending")
	time.Sleep(time.Hour)
}
