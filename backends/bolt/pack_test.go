package bolt

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// turn is a conversation turn of the usual size, with metadata.
func turn() *driver.Memory {
	m := testMemory(strings.Repeat("I'm really glad you asked about the trip to Lisbon last summer, because we went there with my sister and her kids. ", 8))
	m.ID = 42
	m.Entities = []string{"Lisbon", "sister"}
	m.Source, m.Session = "conversation:7#turn-12", "s7"
	m.Metadata = map[string]any{"speaker": "Ana", "turn": 12.0}
	m.LastAccessedAt, m.AccessCount = testTime.Add(time.Hour), 3
	m.Embedding = driver.Embedding{Model: "hash-v1-256", Vector: make([]float32, 256)}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range m.Embedding.Vector {
		m.Embedding.Vector[i] = r.Float32() - 0.5
	}
	return m
}

// A record round-trips exactly in the packed formats, its tail is packed
// (smaller than the content), and Touch patches its head without
// touching the tail.
func TestPackedRecordRoundTrip(t *testing.T) {
	m := turn()
	rec, err := encodeRecord(m, 9, 120)
	if err != nil {
		t.Fatal(err)
	}
	if rec[0] != packedRecord {
		t.Fatalf("format %d, want %d", rec[0], packedRecord)
	}
	if limit := 1200 + len(m.Content)/2; len(rec) > limit {
		t.Errorf("record of %d bytes with a %d-byte content: want the content packed (at most %d)", len(rec), len(m.Content), limit)
	}
	got, h, err := decodeRecord(m.ID, rec)
	if err != nil {
		t.Fatal(err)
	}
	if h.Seq != 9 || h.NTok != 120 || !reflect.DeepEqual(got, m) {
		t.Errorf("decoded %+v (seq %d, tokens %d), want %+v", got, h.Seq, h.NTok, m)
	}
	at := testTime.Add(2 * time.Hour)
	touched, err := touchRecord(rec, at)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err = decodeRecord(m.ID, touched)
	if err != nil {
		t.Fatal(err)
	}
	if !got.LastAccessedAt.Equal(at) || got.AccessCount != 4 || got.Content != m.Content {
		t.Errorf("after Touch: accessed %v, %d times, content %q", got.LastAccessedAt, got.AccessCount, got.Content)
	}

	// An earlier version leaves out what the next one has, also packed.
	next := m.Clone()
	next.Version = 2
	next.Significance = 8
	ver, err := encodeVersion(m, next, 120)
	if err != nil {
		t.Fatal(err)
	}
	if ver[0] != packedVersion {
		t.Fatalf("format %d, want %d", ver[0], packedVersion)
	}
	old, oh, err := decodeRecord(m.ID, ver)
	if err != nil {
		t.Fatal(err)
	}
	if oh.Flags != sameContent|sameVector || old.Content != "" || old.Embedding.Vector != nil {
		t.Errorf("earlier version: flags %b, content %q, vector %v: want both left out", oh.Flags, old.Content, old.Embedding.Vector != nil)
	}
	ms := []*driver.Memory{old, next}
	if !resolveVersions(ms, []recordHead{oh, {}}) || !reflect.DeepEqual(old, m) {
		t.Errorf("resolved %+v, want %+v", old, m)
	}
}

// A tail too short to gain from DEFLATE is stored raw, and reads back.
func TestPackShortRaw(t *testing.T) {
	for _, s := range []string{"", "short", strings.Repeat("x", packMin-1)} {
		p := pack(nil, []byte(s), true)
		if p[0] != packRaw {
			t.Errorf("%q packed with %d, want raw", s, p[0])
		}
		raw, release, err := unpack(p)
		if err != nil || string(raw) != s {
			t.Errorf("unpack(pack(%q)) = %q, %v", s, raw, err)
		}
		release()
	}
}

// Damaged packed bytes are reported as a corrupt record, never read past
// or taken for a shorter value.
func TestPackCorrupt(t *testing.T) {
	rec, err := encodeRecord(turn(), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	_, d := decodeHead(rec)
	tail := len(rec) - len(d.b)
	if rec[tail] != packDeflateDict {
		t.Fatalf("the tail is packed with %d, want %d", rec[tail], packDeflateDict)
	}
	for name, damage := range map[string]func([]byte) []byte{
		"truncated":      func(b []byte) []byte { return b[:len(b)-10] },
		"unknown method": func(b []byte) []byte { b[tail] = 9; return b },
		"longer length":  func(b []byte) []byte { b[tail+1]++; return b },
		"shorter length": func(b []byte) []byte { b[tail+1]--; return b },
		"no dictionary":  func(b []byte) []byte { b[tail] = packDeflate; return b },
		"flipped bits": func(b []byte) []byte {
			for i := tail + 4; i < len(b); i += 7 {
				b[i] ^= 0x5a
			}
			return b
		},
	} {
		_, _, err := decodeRecord(1, damage(bytes.Clone(rec)))
		if !errors.Is(err, errCorrupt) {
			t.Errorf("%s: %v, want a corrupt record", name, err)
		}
	}
}

// An audit entry written before store format 3 is its JSON; one written
// since is packed; both read back.
func TestPackAudit(t *testing.T) {
	js := []byte(`{"seq":1,"action":"remember","detail":"{\"memories\":[{\"id\":1,\"sha256\":\"` + strings.Repeat("ab", 32) + `\"},{\"id\":2,\"sha256\":\"` + strings.Repeat("cd", 32) + `\"}]}"}`)
	for _, v := range [][]byte{js, packAudit(js)} {
		got, release, err := unpackAudit(v)
		if err != nil || !bytes.Equal(got, js) {
			t.Errorf("unpackAudit(%.20q) = %.20q, %v", v, got, err)
		}
		release()
	}
	if p := packAudit(js); p[0] != packDeflate || len(p) >= len(js) {
		t.Errorf("audit entry of %d bytes packed with %d to %d bytes", len(js), p[0], len(p))
	}
}

func BenchmarkEncodeRecord(b *testing.B) {
	m := turn()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodeRecord(m, 1, 1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeRecord(b *testing.B) {
	rec, err := encodeRecord(turn(), 1, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := decodeRecord(1, rec); err != nil {
			b.Fatal(err)
		}
	}
}
