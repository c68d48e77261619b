package retryhttp

import (
	"strings"
	"testing"
)

func TestErrorText(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`,
			"Incorrect API key provided (type invalid_request_error, code invalid_api_key)"},
		{`{"error":{"message":"model not found","type":"","code":null}}`, "model not found"},
		{`{"error":"model \"x\" not found, try pulling it first"}`, `model "x" not found, try pulling it first`},
		{`{"error":"Input validation error: texts cannot be empty","error_type":"Validation"}`, "Input validation error: texts cannot be empty"},
		{`{"id":"8f3c","message":"invalid api token"}`, "invalid api token"}, // Cohere
		{`{"detail":"Invalid API key"}`, "Invalid API key"},                  // Jina
		{`{"detail":[{"loc":["body","query"],"msg":"field required"}]}`, `{"detail":[{"loc":["body","query"],"msg":"field required"}]}`},
		{"", "(empty body)"},
		{"  <html>bad gateway</html>\n", "<html>bad gateway</html>"},
	} {
		if got := ErrorText([]byte(tc.body)); got != tc.want {
			t.Errorf("ErrorText(%s) = %q, want %q", tc.body, got, tc.want)
		}
	}
	if got := ErrorText([]byte(strings.Repeat("x", 500))); len(got) > 210 || !strings.HasSuffix(got, "…") {
		t.Errorf("a long body is not cut: %d bytes", len(got))
	}
}
