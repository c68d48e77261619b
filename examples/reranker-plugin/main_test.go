package main

import (
	"testing"

	"github.com/memos-go/memos/plugins/sdk/sdktest"
)

// TestConformance runs memos' reranker conformance cases against the plugin
// through the real protocol shims, without building a binary.
func TestConformance(t *testing.T) { sdktest.RunReranker(t, overlap{}) }

func TestScores(t *testing.T) {
	r := sdktest.ConnectReranker(t, overlap{})
	texts := []string{
		"The team meets on Thursdays.",
		"Caroline went to the LGBTQ support group on 7 May.",
		"Caroline likes painting sunsets.",
	}
	got, err := r.Rerank(t.Context(), "When did Caroline go to the support group?", texts)
	if err != nil {
		t.Fatal(err)
	}
	// query terms: caroline, go, support, group → 0, 3 (go ≠ went), 1 of 4
	if !(got[1] > got[2] && got[2] > got[0] && got[0] == 0) {
		t.Fatalf("scores %v: want the support-group text first, then the other Caroline text, then the unrelated one at 0", got)
	}
}
