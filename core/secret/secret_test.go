package secret_test

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memos-go/memos/core/bench/dataset"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/secret"
)

// The samples are made up in each provider's shape; none is a real key.
var secrets = map[string]string{
	"aws_access_key": "the deploy user is AKIAZ7QPVX4M2KD8WNRT with the usual policy",
	"private_key":    "key file:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n-----END OPENSSH PRIVATE KEY-----",
	"github_token":   "use ghp_R8kLm2QxZ7vT4nWp9sYb3HcJ6dFg1aEu5oIy for the CI pushes",
	"gitlab_token":   "runner token glpat-x7Kq2Lm9Pz4Rt8Vw3Ny6",
	"slack_token":    "the bot posts with xoxb-2741-88310-Qm7ZrT4kLp9WxY2v",
	"slack_webhook":  "alerts go to https://hooks.slack.com/services/T0A1B2C3D/B4E5F6G7H/x9Y8z7W6v5U4t3S2r1Q0",
	"stripe_key":     "billing uses sk_live_4eC39HqLyjWDarjtT1zdp7dc",
	"api_key":        "my OpenAI key is sk-proj-Tq8ZmW3kLp7XvR2nYb9sHc4dFg6JeA1u",
	"google_api_key": "maps key AIzaSyD4kP9xQm2LvT7nWr3Yb8sHc6dFg1JeA5u",
	"jwt":            "session: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.Xq7ZmW3kLp9TvR2nYb8sHc4",
	"url_password":   "the replica is at postgres://app:Wint3r-Sun@db.internal:5432/app",
	"docker_token":   "password: dckr_pat_QfMnjEXK8cyTT6FTQ2tXbEeTabc",
	"url_credential": "the export is at https://files.example.com/x.csv?token=Qm7ZrT4kLp9WxY2vB8nH",
	"high_entropy":   "the backup passphrase is Zq8Lm2Xv7Tn4Rw9Ky3Pb6Hs1",
}

func TestDetectsTypicalSecrets(t *testing.T) {
	d, err := secret.New(secret.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for rule, text := range secrets {
		f, ok := d.Find(text)
		if !ok || f.Rule != rule {
			t.Errorf("%q: found %+v (%v), want rule %s", text, f, ok, rule)
			continue
		}
		if r := f.Reason(); !strings.Contains(r, rule) || strings.Contains(r, text[f.Offset:f.Offset+8]) {
			t.Errorf("reason %q: want the rule named and nothing of the secret", r)
		}
	}
	for _, text := range []string{
		"Alice's home lab runs Proxmox on three nodes",
		"the commit 3f2a9c4e8b1d7f6a5c0e9d8b7a6f5e4d3c2b1a09 fixed it",                   // a hash: hex, not random enough
		"the sha256 is e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", // likewise
		"see https://en.wikipedia.org/wiki/Shannon_entropy_(information_theory)",
		"SomeVeryLongJavaClassNameFactoryBean2 is in the way",
		"the ticket is JIRA-12345 and the build 2024-05-01T10:00:00Z",
		"mailto:alice@example.com or https://alice:@example.com",
		`database_url = "postgresql://user:password@localhost/mydatabase"`, // placeholders
		"curl http://admin:admin@localhost:3000/api/datasources",
		"DSN postgres://app:${DB_PASSWORD}@db/app",
		"the sheet: https://drive.google.com/file/d/1vL1HrB8MmnGY0gXuM7G4nb4-LH8m0Cw5/view", // an address, not a key
		"import 'package:app/src/Tasks%20Managment/widgets/custom_app_bar.dart';",
	} {
		if f, ok := d.Find(text); ok {
			t.Errorf("%q: found %+v, want nothing", text, f)
		}
	}
}

func TestConfig(t *testing.T) {
	if d, err := secret.New(secret.Config{Disable: true}); err != nil || d != nil {
		t.Errorf("disabled: %v, %v", d, err)
	} else if _, ok := d.Find(secrets["aws_access_key"]); ok {
		t.Error("a disabled (nil) detector found something")
	}
	d, err := secret.New(secret.Config{Patterns: []string{`ACME-[0-9]{8}`}, MinEntropy: -1})
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := d.Find("the licence is ACME-20240501"); !ok || f.Rule != "pattern 1" || f.Offset != 15 {
		t.Errorf("extra pattern: %+v, %v", f, ok)
	}
	if f, ok := d.Find(secrets["high_entropy"]); ok {
		t.Errorf("generic rule off, found %+v", f)
	}
	for _, c := range []secret.Config{{Patterns: []string{"("}}, {Patterns: []string{""}}, {MinLength: 4}, {MinEntropy: 9}} {
		if _, err := secret.New(c); !errors.Is(err, driver.ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", c, err)
		}
	}
}

// TestFalsePositivesOnDevConversations runs the detector over every distinct
// turn of the LoCoMo and LongMemEval-S dev conversations (../shared/data):
// real chat, with code, configuration files and links. It logs each turn it
// flags; at the defaults two of 49,737 are, and both hold a credential (a
// Docker access token in a configuration file, an access token in a URL
// query), so no flag is a false positive. The test fails above one turn in
// 10,000 flagged.
func TestFalsePositivesOnDevConversations(t *testing.T) {
	if testing.Short() {
		t.Skip("reads every dev conversation turn")
	}
	turns, _, err := dataset.DevTurns(filepath.Join("..", "..", "..", "shared", "data"))
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("dev conversations not found: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	d, err := secret.New(secret.Config{})
	if err != nil {
		t.Fatal(err)
	}
	flagged := 0
	for _, turn := range turns {
		if f, ok := d.Find(turn.Content); ok {
			flagged++
			lo, hi := max(0, f.Offset-40), min(len(turn.Content), f.Offset+60)
			t.Logf("flagged (%s): …%q…", f.Rule, turn.Content[lo:hi])
		}
	}
	rate := float64(flagged) / float64(len(turns))
	t.Logf("%d of %d dev turns flagged (%.4f%%)", flagged, len(turns), 100*rate)
	if rate > 1e-4 {
		t.Errorf("the detector flags %.4f%% of real conversation turns; keep it under 0.01%%", 100*rate)
	}
}

// TestCatchesRandomKeys measures the generic rule on random keys of the
// base62 and base64 alphabets (seeded, so the figures are stable): it must
// catch at least 95% of 24-character keys and 99% of longer ones, embedded
// in a sentence.
func TestCatchesRandomKeys(t *testing.T) {
	d, err := secret.New(secret.Config{})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, alphabet := range []string{
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
	} {
		for _, n := range []int{24, 32, 40} {
			const keys = 2000
			caught := 0
			for range keys {
				b := make([]byte, n)
				for i := range b {
					b[i] = alphabet[r.IntN(len(alphabet))]
				}
				if f, ok := d.Find("the token for the staging API is " + string(b) + ", keep it safe"); ok && f.Rule == "high_entropy" {
					caught++
				}
			}
			rate := float64(caught) / keys
			t.Logf("%d-character keys of a %d-letter alphabet: %.1f%% caught", n, len(alphabet), 100*rate)
			if want := map[bool]float64{true: 0.95, false: 0.99}[n == 24]; rate < want {
				t.Errorf("%d-character keys: %.1f%% caught, want at least %.0f%%", n, 100*rate, 100*want)
			}
		}
	}
}
