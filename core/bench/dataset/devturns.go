package dataset

import (
	"path/filepath"
	"slices"
)

// A Turn is one conversation turn: its session and its text.
type Turn struct{ Session, Content string }

// A DevQuestion is a question of the dev sets and the turns that answer it.
type DevQuestion struct {
	Text string
	// Evidence holds the indexes, among the turns DevSet returns, of the
	// turns that answer the question, ascending; none when the data gives
	// it no answer (LoCoMo's adversarial questions, LongMemEval's
	// abstentions).
	Evidence []int
}

// DevTurns returns the distinct turns of the LoCoMo and LongMemEval-S dev
// sets in dataDir (see the data README), in file order, and every question
// asked about them: real conversation text for benchmarks that need more
// than the synthetic corpus. A missing data file is an error that wraps
// fs.ErrNotExist.
func DevTurns(dataDir string) ([]Turn, []string, error) {
	turns, qs, err := DevSet(dataDir)
	if err != nil {
		return nil, nil, err
	}
	return turns, questionTexts(qs), nil
}

// questionTexts returns the questions' texts, in order.
func questionTexts(qs []DevQuestion) []string {
	texts := make([]string, len(qs))
	for i, q := range qs {
		texts[i] = q.Text
	}
	return texts
}

// DevSet is DevTurns with each question's evidence. A turn that several
// LongMemEval haystacks share is one turn, the evidence of every question
// whose haystack holds it.
func DevSet(dataDir string) ([]Turn, []DevQuestion, error) {
	lm, err := LoadLoCoMo(filepath.Join(dataDir, "locomo", "locomo-dev.json"), Options{})
	if err != nil {
		return nil, nil, err
	}
	lme, err := LoadLongMemEval(filepath.Join(dataDir, "longmemeval", "longmemeval-s-dev100.json.gz"), Options{})
	if err != nil {
		return nil, nil, err
	}
	var turns []Turn
	var qs []DevQuestion
	index := map[Turn]int{}
	for _, d := range []*Dataset{lm, lme} {
		for _, c := range d.Corpora {
			of := make(map[string]int, len(c.Docs)) // doc key → turn index
			for _, doc := range c.Docs {
				t := Turn{Session: doc.Input.Session, Content: doc.Input.Content}
				i, ok := index[t]
				if !ok {
					i = len(turns)
					index[t] = i
					turns = append(turns, t)
				}
				of[doc.Key] = i
			}
			for _, q := range c.Queries {
				dq := DevQuestion{Text: q.Text}
				for k := range q.Relevant {
					if i, ok := of[k]; ok && !slices.Contains(dq.Evidence, i) {
						dq.Evidence = append(dq.Evidence, i)
					}
				}
				slices.Sort(dq.Evidence)
				qs = append(qs, dq)
			}
		}
	}
	return turns, qs, nil
}
