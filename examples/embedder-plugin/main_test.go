package main

import (
	"testing"

	"github.com/memos-go/memos/plugins/sdk/sdktest"
)

// TestConformance runs memos' embedder conformance cases against the
// plugin through the real protocol shims, without building a binary.
func TestConformance(t *testing.T) { sdktest.Run(t, trigrams{}) }
