package dataset

import "path/filepath"

// A Turn is one conversation turn: its session and its text.
type Turn struct{ Session, Content string }

// DevTurns returns the distinct turns of the LoCoMo and LongMemEval-S dev
// sets in dataDir (see the data README), in file order, and every question
// asked about them: real conversation text for benchmarks that need more
// than the synthetic corpus. A missing data file is an error that wraps
// fs.ErrNotExist.
func DevTurns(dataDir string) ([]Turn, []string, error) {
	lm, err := LoadLoCoMo(filepath.Join(dataDir, "locomo", "locomo-dev.json"), Options{})
	if err != nil {
		return nil, nil, err
	}
	lme, err := LoadLongMemEval(filepath.Join(dataDir, "longmemeval", "longmemeval-s-dev100.json.gz"), Options{})
	if err != nil {
		return nil, nil, err
	}
	var turns []Turn
	var qs []string
	seen := map[Turn]bool{}
	for _, d := range []*Dataset{lm, lme} {
		for _, c := range d.Corpora {
			for _, doc := range c.Docs {
				t := Turn{Session: doc.Input.Session, Content: doc.Input.Content}
				if !seen[t] {
					seen[t] = true
					turns = append(turns, t)
				}
			}
			for _, q := range c.Queries {
				qs = append(qs, q.Text)
			}
		}
	}
	return turns, qs, nil
}
